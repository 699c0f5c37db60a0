"""The message box and what sits beside it: drafts, Edit & resend, the conversation's system prompt, the Think switch."""
