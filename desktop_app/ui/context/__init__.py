"""The model's context as the window shows it: the meter under the message box, the transcript's note, and what keeps them up to date."""
