"""Renderers: text, images (Pillow), SVG and HTML replays, animations."""
