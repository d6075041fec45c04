"""Evaluations of quality (``cpqa eval``): each runs the product's own objects, varied through their options."""
