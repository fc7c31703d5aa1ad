"""Errors raised by the runtime; each type has a stable code (``NXR...``) and says what to do."""

from __future__ import annotations


class NexaRuntimeError(Exception):
    """Base of every runtime error: ``code`` is stable, ``str(error)`` tells the user what to do."""

    code = "NXR000"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# --- checks before continuation / resume -------------------------------------------------


class ContinuationError(NexaRuntimeError):
    """A run cannot be continued (or resumed) as asked."""


class RunNotSettledError(ContinuationError):
    """The previous run is still running or waiting for approval."""

    code = "NXR001"


class UnknownToolOutcomeError(ContinuationError):
    """A tool call started but its end was never recorded (for example the process died)."""

    code = "NXR002"

    def __init__(self, message: str, call_ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.call_ids = call_ids


class EmptyInputError(ContinuationError):
    """A continuation needs a nonempty input."""

    code = "NXR003"


class DefinitionDriftError(ContinuationError):
    """The agent, model, provider or working directory differs from the previous run."""


class AgentDefinitionMismatchError(DefinitionDriftError):
    """The agent's name, prompt or tools changed since the previous run."""

    code = "NXR004"


class ModelMismatchError(DefinitionDriftError):
    """The model differs from the previous run's model."""

    code = "NXR005"


class ProviderMismatchError(DefinitionDriftError):
    """The provider differs from the previous run's provider."""

    code = "NXR006"


class WorkingDirectoryMismatchError(DefinitionDriftError):
    """The working directory differs from the previous run's working directory."""

    code = "NXR007"


class RunAlreadySettledError(ContinuationError):
    """Only running or approval-waiting runs can be resumed; settled runs are continued."""

    code = "NXR008"


class ApprovalPendingError(ContinuationError):
    """A tool call still waits for approve/deny, so the run cannot be resumed yet."""

    code = "NXR009"


# --- approvals, recovery, cancellation --------------------------------------------------


class RunActionError(NexaRuntimeError):
    """An approve / deny / recover / cancel request does not fit the run."""


class ApprovalNotPendingError(RunActionError):
    """No pending approval exists for that call id."""

    code = "NXR010"


class RecoveryNotNeededError(RunActionError):
    """The call id has no unknown outcome to recover."""

    code = "NXR011"


class RunNotCancellableError(RunActionError):
    """Only running or approval-waiting runs can be cancelled."""

    code = "NXR012"


# --- checkpoints --------------------------------------------------------------------------


class CheckpointError(NexaRuntimeError):
    """The checkpoint store cannot do what was asked."""

    code = "NXR020"


class RunNotFoundError(CheckpointError):
    """No run with that id is in the store."""

    code = "NXR021"


class StoreSchemaTooNewError(CheckpointError):
    """The store was written by a newer nexa-lsp."""

    code = "NXR022"


class StoreCorruptError(CheckpointError):
    """The store file is damaged (truncated, overwritten, not SQLite).

    The damaged file was moved aside unchanged (``kept_at``); the next use of the store
    path starts a new, empty store.
    """

    code = "NXR023"

    def __init__(self, message: str, path: str = "", kept_at: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.kept_at = kept_at


class RunInUseError(CheckpointError):
    """Another live process is driving the run, so this one may not resume it."""

    code = "NXR024"


class RunUnreadableError(CheckpointError):
    """A stored run cannot be read back (edited by hand, or written by a newer nexa-lsp)."""

    code = "NXR025"


class RunChangedError(CheckpointError):
    """The run was saved by someone else after this state was read, so saving it would lose
    their change (an approval, a resume, a recovery, a cancel); nothing was saved."""

    code = "NXR027"


class ArtifactPathError(NexaRuntimeError, ValueError):
    """An artifact reference points outside the run's artifact directory (or is not a plain path)."""

    code = "NXR026"


# --- providers ----------------------------------------------------------------------------


class ProviderError(NexaRuntimeError):
    """A provider call failed."""

    code = "NXR030"


class ProviderConfigError(ProviderError):
    """The provider is unknown or lacks settings (API key, base URL)."""

    code = "NXR031"


class ProviderAuthError(ProviderError):
    """The provider refused the credentials (HTTP 401/403)."""

    code = "NXR032"


class ProviderNotFoundError(ProviderError):
    """The endpoint or model does not exist (HTTP 404)."""

    code = "NXR033"


class ProviderUnavailableError(ProviderError):
    """The provider kept failing (HTTP 429/5xx or network errors) after every retry."""

    code = "NXR034"


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time."""

    code = "NXR035"


class ProviderResponseError(ProviderError):
    """The provider answered something that is not a valid response of its protocol."""

    code = "NXR036"


class ProviderResponseTooLargeError(ProviderError):
    """The provider's answer exceeded the response size limit."""

    code = "NXR037"


class ProviderRequestError(ProviderError):
    """The provider rejected the request (HTTP 4xx other than 401/403/404/429)."""

    code = "NXR038"


# --- settings / tools ------------------------------------------------------------------------


class SettingsError(NexaRuntimeError):
    """A ``.nxs`` settings file cannot be read."""

    code = "NXR040"


class ToolDefinitionError(NexaRuntimeError):
    """A tool cannot be built from the given callable or declaration."""

    code = "NXR041"


class AgentDeclarationError(NexaRuntimeError):
    """An agent cannot be built from its ``.nx`` declaration."""

    code = "NXR042"


# --- codes of why a run stopped (kept in ``RunState.error``) --------------------------------

RUN_CANCELLED = "NXR050"
RUN_TIMED_OUT = "NXR051"
RUN_BUDGET_EXHAUSTED = "NXR052"
TOOL_FAILED = "NXR053"
RUN_REJECTED_CALLS = "NXR054"
RUN_INTERNAL_ERROR = "NXR059"
