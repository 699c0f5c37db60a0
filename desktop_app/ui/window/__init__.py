"""The main window's frame: layout, menus, geometry, focus, shortcuts, startup and the first-run welcome."""
