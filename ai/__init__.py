"""tilehouse's AI players."""
