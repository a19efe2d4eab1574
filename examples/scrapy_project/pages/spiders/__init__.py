"""The example's spiders."""
