## Man pages and design notes.
