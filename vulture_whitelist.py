"""Names vulture (`make deadcode`) counts as unused but that are called or read by name from
outside Python's sight: Qt's virtual methods and properties, ctypes structures and callbacks,
protocols (enum, context managers, uvicorn, http.server, pytest), and references kept on purpose.
Never imported; each name stands for every attribute of that name (vulture's whitelist format)."""
# ruff: noqa: B018, F821

# Package __getattr__: the engine's and the library's names are exported lazily.
__getattr__

# Qt calls these by name (virtual overrides, Property names read by QML/stylesheets).
_.paintEvent
_.eventFilter
_.takeAt
_.expandingDirections
_.hasHeightForWidth
tokensPerSecond
acceptanceRate
# Widgets and helpers kept on the window so that they live as long as it (Qt parent or signal owner).
_.tool_turns
_.speed_feed
_.import_button
_.refresh_button

# ctypes: fields of llama.cpp's structs written for the C side to read, a callback's signature,
# and the patched library's documented entry point for models with several MTP heads.
_.n_threads_batch
_.pooling_type
_.progress_callback
_.ctx_type
_.ctx_other
_.embd
_.vocab_only
user_data
set_nextn_layer_offset

# Dataclass fields that are part of a record (filled in, shown or serialised whole).
n_params
gpu_offload
k_current
_.k_current
tool_call_id

# Protocols: __exit__'s traceback, enum's _generate_next_value_, Jinja's sandbox hook, sqlite3's
# row factory, uvicorn's server flag and its H11Protocol hook, http.server's handler hooks.
tb
last_values
_._generate_next_value_
intercepted_binops
_.row_factory
_.should_exit
_.send_400_response
_.daemon_threads
protocol_version
_.log_message
_.do_HEAD
_.do_GET
_.close_connection
soft  # resource.getrlimit's pair, of which the hard limit is used
SPECULATION  # a request field: frozenset(Field) lists it among the accepted ones

# pytest and the test clients' hooks, called by name.
pytestmark
pytest_collection_modifyitems
specchat_home
fresh_home  # a fixture requested for its side effect only
checker_pid
_.allow_requantize
_.nthread
_.suppress_debug_info
_.get_model_settings
legs  # a pydantic model's field: the JSON schema it sends
tally  # an MCP tool, registered by its decorator
_.svg2  # ziamath's config: plain SVG paths for QtSvg (desktop_app/ui/transcript/latex_math.py)
