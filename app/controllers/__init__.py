"""Route handlers, one module per area of the site."""
