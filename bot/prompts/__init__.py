"""Role prompt templates (package data): `<role>.md`, with `_*.md` partials they include."""
