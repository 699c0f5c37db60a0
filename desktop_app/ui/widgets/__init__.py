"""Small widgets used everywhere in the window: text shown as plain text, an eliding label, a flow layout."""
