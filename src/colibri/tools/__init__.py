"""The catalogue: every domain's tools and migrations, gathered above the domains."""
