"""tilehouse's HTTP face: the Flask app factory, Redis store and RQ jobs."""
