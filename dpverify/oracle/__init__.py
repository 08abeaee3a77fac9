"""Regression oracle: classify other accountants' epsilons against certified bounds."""
