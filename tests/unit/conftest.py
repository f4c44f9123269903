"""Hypothesis without its timing checks: on a loaded machine (CI shares its cores) a slow first draw or a slow
example says nothing about the property, and this tier stops at its first failure."""

from hypothesis import HealthCheck, settings

settings.register_profile("shared-cores", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("shared-cores")
