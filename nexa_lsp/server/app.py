"""The Nexa language server: pygls' server and protocol with the project's conventions.

:func:`nexa_lsp.server.main.create_server` builds it with every feature registered.
Handlers are registered through :meth:`NexaLanguageServer.feature` and
:meth:`NexaLanguageServer.command`, which wrap them so that an exception answers the
request with an LSP error (and is logged with ``window/logMessage``) instead of
reaching the client as a crash. A refusal the user can act on (:class:`RequestFailed`
and pygls' other JSON-RPC errors) is answered and logged as one line; a real internal
error keeps its traceback in the log. Shared state of the feature modules:

* ``server.documents`` - open documents, their parses and analyses
  (:class:`nexa_lsp.server.documents.DocumentStore`);
* ``server.client`` - what the client declared it can do (:class:`ClientFacts`);
* ``server.settings_for(uri)`` - the ``nexa`` settings in force for a document;
* ``server.settings_listeners`` - callables run after the settings change;
* ``server.log(message, level)`` - a ``window/logMessage``;
* ``server.diagnostic_providers`` - callables ``(DocumentState, SourceFile) ->
  list[Diagnostic]`` whose findings join the document's diagnostics (pushed and
  pulled alike);
* ``server.code_action_providers`` - callables ``(CodeActionParams) ->
  list[CodeAction]`` whose actions join ``textDocument/codeAction``, and
  ``server.code_action_kinds``, the kinds advertised for it;
* ``server.document_checkers`` - callables ``(DocumentState) -> Checked | None``; the first
  that claims a document (answers not None) gives its diagnostics instead of the Nexa
  checks (``.nxs`` settings files: ``nexa_lsp.server.secrets_documents``);
* ``server.request_gates`` - callables ``(method, params) -> bool``; a request one of them
  answers True for gets ``null`` without running its handler (Nexa features asked about
  a ``.nxs`` settings file).

The runs feature (``nexa_lsp.server.runs``: code lenses and the ``nexa.*`` run commands)
uses the provider hooks and owns ``textDocument/codeLens``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import sys
import threading
import traceback
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import FeatureRequestError, JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from nexa_lsp import __version__
from nexa_lsp.server import to_lsp
from nexa_lsp.server.changes import DiagnosticChanges
from nexa_lsp.server.chunked_lsp import EncodedJson, encode_json
from nexa_lsp.server.documents import Checked, DocumentState, DocumentStore, normal_path, path_of_uri
from nexa_lsp.server.from_lsp import ClientFacts, client_facts
from nexa_lsp.server.memory import IdleCollector
from nexa_lsp.server.settings import ServerSettings, settings_for_uri
from nexa_lsp.server.startup import StartUp
from nexa_lsp.server.transport import read_messages

if TYPE_CHECKING:
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile

logger = logging.getLogger(__name__)

REQUEST_FAILED = -32803

F = TypeVar("F", bound=Callable[..., Any])


class RequestFailed(JsonRpcException):
    """A request that cannot be answered for a reason the user can act on."""

    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


class _InvalidRequest:
    """A request whose params do not fit the method's LSP types (answered with -32602)."""

    jsonrpc = "2.0"

    def __init__(self, msg_id: int | str, method: str, reason: Exception) -> None:
        self.id = msg_id
        self.method = method
        self.reason = reason


class NexaProtocol(LanguageServerProtocol):
    """pygls' protocol, with these changes:

    * positions are always UTF-16 (the syntax layer converts offsets for that encoding only);
    * a request whose params cannot be read is answered with an Invalid Params error instead
      of being dropped (the client would wait for an answer forever);
    * a refused request is answered and logged as one line, without pygls' traceback on
      stderr (clients show stderr as errors); internal errors keep their traceback;
    * ``$/cancelRequest`` for a request already answered is expected (clients cancel
      what they no longer need) and not warned about;
    * pygls keeps no copy of the open documents (its ``workspace`` has none): the text
      sync handlers (``server/sync.py``) apply each change, with LSP line breaks, to the
      server's own buffer (``nexa_lsp.text.DocumentText``);
    * an answer already encoded as JSON (``chunked_lsp.EncodedJson``: ``documentSymbol`` and
      full ``textDocument/diagnostic`` reports, joined from per-chunk encodings) and
      ``publishDiagnostics`` params so encoded (:meth:`notify_encoded`) are written without
      pygls' conversion, in compact JSON.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._methods: dict[int | str, str] = {}  # method of each request not yet answered
        self._writes: set[asyncio.Future[Any]] = set()  # encoded answers still being written

    def _handle_request(self, msg_id: int | str, method_name: str, params: Any) -> None:
        self._methods[msg_id] = method_name
        super()._handle_request(msg_id, method_name, params)

    def _send_handler_result(self, future: Future[Any], *, msg_id: int | str) -> None:
        method = self._methods.pop(msg_id, "request")
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError):
            self._request_futures.pop(msg_id, None)
            self._server.log(f"{method}: {error}", lsp.MessageType.Warning)  # type: ignore[attr-defined]
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _send_response(self, msg_id: Any, result: Any | None = None, error: Any = None) -> None:
        """An answer already encoded (``chunked_lsp.EncodedJson``) is written as it is."""
        if error is None and isinstance(result, EncodedJson):
            self._send_encoded(msg_id, result.text)
            return
        super()._send_response(msg_id, result, error)

    def _send_encoded(self, msg_id: int | str, result: str) -> None:
        self._result_types.pop(msg_id, None)
        self._write_body(f'{{"id":{encode_json(msg_id)},"result":{result},"jsonrpc":"2.0"}}')

    def notify_encoded(self, method: str, params: str) -> None:
        """Send the notification ``method`` whose params are already encoded as JSON text
        (``publishDiagnostics`` joined from per-chunk encodings), without pygls' conversion."""
        self._write_body(f'{{"method":{encode_json(method)},"params":{params},"jsonrpc":"2.0"}}')

    def _write_body(self, body: str) -> None:
        """Frame and write one message's JSON text."""
        data = body.encode(self.CHARSET)
        if self._include_headers:
            header = f"Content-Length: {len(data)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            data = header.encode(self.CHARSET) + data
        if self.writer is None:
            logger.error("Unable to send data, no available transport!")
            return
        written = self.writer.write(data)
        if inspect.isawaitable(written):
            task = asyncio.ensure_future(written)
            self._writes.add(task)
            task.add_done_callback(self._writes.discard)

    def _handle_cancel_notification(self, msg_id: int | str) -> None:
        if msg_id not in self._request_futures:
            logger.debug("cancel for request %s, already answered", msg_id)
            return
        super()._handle_cancel_notification(msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id = data.get("id") if isinstance(data, dict) else None
            method = data.get("method") if isinstance(data, dict) else None
            if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) and isinstance(method, str):
                return _InvalidRequest(msg_id, method, exc)
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _InvalidRequest):
            cause = message.reason.__cause__ or message.reason
            text = f"invalid params for {message.method}: {cause}".splitlines()[0]
            self._server.log(text, lsp.MessageType.Warning)  # type: ignore[attr-defined]
            self._send_response(message.id, error=JsonRpcInvalidParams(message=text).to_response_error())
            return
        super().handle_message(message)

    def _user_handler(self, method: str, params: Any) -> Generator[Any, Any, None]:
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._user_handler(lsp.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._user_handler(lsp.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams) -> Generator[Any, Any, None]:
        yield from self._user_handler(lsp.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            # every client supports UTF-16; offering only it keeps conversions exact
            general.position_encodings = [lsp.PositionEncodingKind.Utf16]
        self._server.client = client_facts(params.capabilities)  # type: ignore[attr-defined]
        result: lsp.InitializeResult = yield from super().lsp_initialize(params)
        return result


class NexaLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("nexa-lsp", __version__, protocol_cls=NexaProtocol, max_workers=4)
        self.documents = DocumentStore()
        self.settings = ServerSettings()
        self.folder_settings: dict[str, ServerSettings] = {}
        self.initialization_options: object = None
        self.settings_listeners: list[Callable[[], None]] = []
        self.diagnostic_providers: list[Callable[[DocumentState, SourceFile], list[Diagnostic]]] = []
        self.code_action_providers: list[Callable[[lsp.CodeActionParams], list[lsp.CodeAction]]] = []
        self.code_action_kinds: list[str] = []
        self.document_checkers: list[Callable[[DocumentState], Checked | None]] = []
        self.request_gates: list[Callable[[str, Any], bool]] = []
        self.idle_collector = IdleCollector()
        self.startup = StartUp(self)
        self.diagnostic_changes = DiagnosticChanges()  # what held workspace/diagnostic requests wait on
        self.client = ClientFacts()  # what the client declared (set by `initialize`)

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve on stdin/stdout with a frame reader that survives malformed headers."""
        self._stop_event = threading.Event()
        self.idle_collector.settle()  # the modules loaded so far live as long as the process (memory.py)
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(read_messages(self._stop_event, reader, self.protocol, self.report_server_error))
        except BrokenPipeError:
            logger.error("the connection to the client is lost; stopping")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def notify_encoded(self, method: str, params: str) -> None:
        """Send a notification whose params are JSON text already (``NexaProtocol.notify_encoded``)."""
        protocol = self.protocol
        assert isinstance(protocol, NexaProtocol)
        protocol.notify_encoded(method, params)

    # -- client facts

    @property
    def push_diagnostics(self) -> bool:
        """Push (`publishDiagnostics`) unless the client pulls (`textDocument/diagnostic`)."""
        return not self.client.pulls_diagnostics

    def client_supports(self, dotted: str) -> bool:
        """True when the client capability at ``dotted`` (snake_case path) is present and not false."""
        value: Any = self.client_capabilities
        for part in dotted.split("."):
            value = getattr(value, part, None)
            if value is None:
                return False
        return value is not False

    def workspace_diagnostic_refresh(self, params: None, callback: Callable[[None], None] | None = None) -> Any:
        """pygls' ``workspace/diagnostic/refresh`` request; held workspace pulls also wake up
        (callers send it after a change the editor did not make, e.g. a run finished)."""
        self.diagnostic_changes.note()
        return super().workspace_diagnostic_refresh(params, callback)

    # -- settings

    def settings_for(self, uri: str | None) -> ServerSettings:
        """The settings of the workspace folder holding ``uri`` (else the global ones)."""
        return settings_for_uri(uri, self.settings, self.folder_settings)

    def refresh_folders(self) -> None:
        folders = []
        try:
            workspace = self.workspace
        except RuntimeError:
            return
        for folder in workspace.folders.values():
            path = path_of_uri(folder.uri)
            if path is not None:
                folders.append(path)
        if not folders and workspace.root_path:
            folders.append(normal_path(workspace.root_path))
        self.documents.folders = folders
        self.documents.forget_disk()

    # -- logging and errors

    def log(self, message: str, level: lsp.MessageType = lsp.MessageType.Log) -> None:
        try:
            self.window_log_message(to_lsp.log_message(level, message))
        except Exception:  # no client connection (tests, shutdown)
            logger.log(logging.ERROR if level == lsp.MessageType.Error else logging.INFO, message)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # request errors are answered and logged by the handler wrapper and the protocol (a
        # refused command is a warning there, not an internal error); the rest is logged here
        if source is FeatureRequestError:
            return
        self.log(f"nexa-lsp internal error: {error}", lsp.MessageType.Error)

    def _guard(self, name: str, handler: Callable[..., Any], notification: bool) -> Callable[..., Any]:
        def failed(exc: BaseException) -> Exception | None:
            if isinstance(exc, JsonRpcException):  # a refusal: requests log it when answering it
                if notification:
                    self.log(f"{name}: {exc}", lsp.MessageType.Warning)
                    return None
                return exc
            detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))
            self.log(f"{name} failed: {type(exc).__name__}: {exc}\n{detail}", lsp.MessageType.Error)
            if notification:
                return None
            return JsonRpcInternalError(message=f"nexa-lsp could not answer {name}: {type(exc).__name__}: {exc}")

        if inspect.iscoroutinefunction(handler):

            @functools.wraps(handler)
            async def guarded_async(*args: Any) -> Any:
                try:
                    if not notification and self._gated(name, args):
                        return None
                    return await handler(*args)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    err = failed(exc)
                    if err is None:
                        return None
                    raise err from exc

            return guarded_async

        @functools.wraps(handler)
        def guarded(*args: Any) -> Any:
            try:
                if not notification and self._gated(name, args):
                    return None
                return handler(*args)
            except Exception as exc:
                err = failed(exc)
                if err is None:
                    return None
                raise err from exc

        return guarded

    def _gated(self, method: str, args: tuple[Any, ...]) -> bool:
        return bool(args) and any(gate(method, args[0]) for gate in self.request_gates)

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]:
        """Register an LSP feature whose failures become LSP errors and log messages."""
        register = super().feature(feature_name, options)
        notification = not _is_request(feature_name)

        def decorator(handler: F) -> F:
            register(self._guard(feature_name, handler, notification))
            return handler

        return decorator

    def command(self, command_name: str) -> Callable[[F], F]:
        """Register a ``workspace/executeCommand`` command (failures become LSP errors)."""
        register = super().command(command_name)

        def decorator(handler: F) -> F:
            guarded = self._guard(command_name, handler, False)
            register(guarded)
            return handler

        return decorator


def _is_request(method: str) -> bool:
    message_types = lsp.METHOD_TO_TYPES.get(method)
    if message_types is None:
        return True
    return hasattr(message_types[0], "id")
