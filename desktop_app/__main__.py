from __future__ import annotations

import sys

from desktop_app.cli import main

sys.exit(main())
