"""The model library's tables: how they are made and filled."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem


def make_table(name: str, headers: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(headers))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.verticalHeader().setVisible(False)
    return table


def fill_table(table: QTableWidget, rows: list[tuple[str, ...]]) -> list[list[QTableWidgetItem]]:
    """Fill ``table`` with ``rows`` of text; returns the items, row by row."""
    table.setRowCount(len(rows))
    items = [[QTableWidgetItem(text) for text in row] for row in rows]
    for r, row_items in enumerate(items):
        for c, item in enumerate(row_items):
            table.setItem(r, c, item)
    return items
