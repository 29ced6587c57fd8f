"""FIDE's TRF and the pairs list: pure text in, text out."""
