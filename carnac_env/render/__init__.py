"""Renderers: text (always available) and, with the render extra, images."""
