"""Laplace / characteristic-function identities of the privacy loss (LT Sec 3)."""
