"""The chat history's tables, their upgrade from older files, and the queries over the message tree.

Messages form a tree per conversation: ``parent_id`` is the message answered or followed (NULL
for the first), and the versions of a message (an edited question, a regenerated answer) are
its siblings. ``active`` marks the version chosen last in each family, and the conversation's
``leaf_id`` the last message of the path shown: from it up to the first message.
"""

from __future__ import annotations

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    leaf_id INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    content TEXT NOT NULL,
    stats TEXT,
    created REAL NOT NULL,
    parent_id INTEGER,
    active INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS attachments (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    mime TEXT NOT NULL,
    data BLOB NOT NULL,
    text TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (message_id, position)
);
CREATE TABLE IF NOT EXISTS conversation_options (
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (conversation_id, name)
);
"""
INDEXES = """
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id);
CREATE INDEX IF NOT EXISTS messages_by_parent ON messages(conversation_id, parent_id, id);
"""
# Files written before versions kept a list: each message follows the one before it, and the
# newest is the end of the conversation.
TO_TREE = (
    "ALTER TABLE messages ADD COLUMN parent_id INTEGER",
    "ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE conversations ADD COLUMN leaf_id INTEGER",
    """UPDATE messages SET parent_id = (SELECT max(p.id) FROM messages p
        WHERE p.conversation_id = messages.conversation_id AND p.id < messages.id)""",
    "UPDATE conversations SET leaf_id = (SELECT max(m.id) FROM messages m WHERE m.conversation_id = conversations.id)",
)

# The path shown, first message first.
PATH = """
WITH RECURSIVE up(id, depth) AS (
    SELECT leaf_id, 0 FROM conversations WHERE id = :conv AND leaf_id IS NOT NULL
    UNION ALL
    SELECT m.parent_id, up.depth + 1 FROM messages m JOIN up ON m.id = up.id WHERE m.parent_id IS NOT NULL
)
SELECT m.* FROM up CROSS JOIN messages m ON m.id = up.id ORDER BY up.depth DESC
"""
# The families of a conversation's messages that have more than one version: the versions'
# ids, oldest first ("1,7,12"), by their parent.
FORKS = """
SELECT parent_id, group_concat(id) AS ids FROM (
    SELECT parent_id, id FROM messages WHERE conversation_id = :conv ORDER BY parent_id, id
) GROUP BY parent_id HAVING count(*) > 1
"""
# The end of the path that goes through the chosen child of :parent (NULL: of the first
# messages), following the version chosen last below it.
DESCEND = """
WITH RECURSIVE down(id, depth) AS (
    SELECT id, 0 FROM messages WHERE conversation_id = :conv AND parent_id IS :parent AND active = 1
    UNION ALL
    SELECT m.id, down.depth + 1 FROM messages m JOIN down
        ON m.conversation_id = :conv AND m.parent_id = down.id AND m.active = 1
) SELECT id FROM down ORDER BY depth DESC LIMIT 1
"""
# A message and everything that follows it, in every version.
SUBTREE = """
WITH RECURSIVE below(id) AS (
    SELECT :id UNION ALL SELECT m.id FROM messages m JOIN below ON m.conversation_id = :conv AND m.parent_id = below.id
) SELECT id FROM below
"""


def upgrade(db: sqlite3.Connection) -> None:
    """Create what is missing and bring a file from an older SpecChat up to date, in place, in
    one transaction (a failure leaves the file as it was)."""
    db.executescript(SCHEMA)
    columns = {row[1] for row in db.execute("PRAGMA table_info(messages)")}
    if "parent_id" not in columns:
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in TO_TREE:
                db.execute(statement)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    db.executescript(INDEXES)
