"""Guest images: recipes under images/, builds cached by recipe hash."""
