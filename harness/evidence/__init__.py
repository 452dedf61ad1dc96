"""Evidence: run records, redaction and the reports rendered from them."""
