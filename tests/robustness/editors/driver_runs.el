;;; driver_runs.el --- Test driver (not part of the configuration): runs from code actions.
;; Opens NEXA_TEST_FILE the way a user would (nexa.el is already loaded), lets eglot-ensure
;; connect, then for each step of NEXA_ACTION_STEPS (JSON: [{"action": "<text in the action
;; title>", "until": "<regexp of the message that ends the step>"}]) puts point on the line
;; of NEXA_ACTION_AT (e.g. "agent Analyst") and runs `eglot-code-actions' as M-x does,
;; retrying until an action with that text is offered. `completing-read' is overridden to
;; pick that action, and to answer a server's question (`window/showMessageRequest') with
;; NEXA_ANSWER (e.g. "Approve"). Every `message' is recorded (eglot shows server messages
;; with it); everything goes to NEXA_TEST_RESULT as JSON.
(require 'json)
(require 'cl-lib)
(require 'seq)

(defvar nexa-test--messages nil "Messages shown so far, newest first.")
(defvar nexa-test--questions nil "The server's questions and the answers given.")
(defvar nexa-test--wanted nil "The text of the code action to pick.")
(defvar nexa-test--nudges nil "When the driver nudged the server (see `nexa-test--nudge').")
(defvar nexa-test--answer (or (getenv "NEXA_ANSWER") "Approve"))

(defun nexa-test--record-message (format-string &rest args)
  (when format-string
    (push (apply #'format-message format-string args) nexa-test--messages)))
(advice-add 'message :before #'nexa-test--record-message)

(defun nexa-test--completing-read (prompt collection &rest _)
  "Pick `nexa-test--wanted' among code actions, or `nexa-test--answer' for a question."
  (let* ((titles (mapcar (lambda (item) (if (consp item) (car item) item)) collection))
         (question (string-match-p "Server reports" prompt)))
    (if question
        (progn
          (push (list (cons 'prompt (substring-no-properties prompt))
                      (cons 'choices (vconcat titles))
                      (cons 'answer nexa-test--answer))
                nexa-test--questions)
          (seq-find (lambda (title) (equal title nexa-test--answer)) titles))
      (seq-find (lambda (title) (string-search nexa-test--wanted title)) titles))))
(advice-add 'completing-read :override #'nexa-test--completing-read)

(defun nexa-test--nudge ()
  "Ask for a hover at point, as eldoc does when the user moves.
Emacs 28's jsonrpc stops reading a chunk of server output at the response that ends a
`jsonrpc-request'; a notification in the same chunk is parsed only when more output
arrives. A user's next move brings that output; so does this."
  (when-let ((server (eglot-current-server)))
    (jsonrpc-async-request server :textDocument/hover (eglot--TextDocumentPositionParams)
                           :success-fn #'ignore :error-fn #'ignore :timeout-fn #'ignore)))

(defun nexa-test--wait (timeout predicate &optional nudge)
  "Process server traffic until PREDICATE is non-nil or TIMEOUT seconds passed.
With NUDGE, ask for a hover each second without PREDICATE (see `nexa-test--nudge')."
  (let ((deadline (+ (float-time) timeout))
        (next-nudge (+ (float-time) 1.0)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (when (and nudge (> (float-time) next-nudge))
        (setq next-nudge (+ (float-time) 1.0))
        (push (float-time) nexa-test--nudges)
        (nexa-test--nudge)))
    (funcall predicate)))

(defun nexa-test--message-since (count regexp)
  "The first message matching REGEXP among those shown after the first COUNT."
  (seq-find (lambda (text) (string-match-p regexp text))
            (reverse (butlast nexa-test--messages count))))

(defun nexa-test--action-titles ()
  (mapcar (lambda (action) (plist-get action :title))
          (eglot-code-actions (line-beginning-position) (line-end-position))))

(let* ((timeout (/ (string-to-number (or (getenv "NEXA_TEST_TIMEOUT_MS") "30000")) 1000.0))
       (result (list (cons 'emacs emacs-version)))
       (steps (json-parse-string (getenv "NEXA_ACTION_STEPS") :object-type 'alist))
       (done nil)
       (buffer (find-file (getenv "NEXA_TEST_FILE"))))
  (condition-case err
      (with-current-buffer buffer
        ;; eglot-ensure connects from post-command-hook: a batch Emacs has no command loop
        (run-hooks 'post-command-hook)
        (push (cons 'managed
                    (if (nexa-test--wait timeout (lambda () (and (bound-and-true-p eglot--managed-mode)
                                                                 (eglot-current-server))))
                        t :json-false))
              result)
        (seq-doseq (step steps)
          (let* ((wanted (alist-get 'action step))
                 (titles nil)
                 (count nil)
                 (record (list (cons 'action wanted))))
            (goto-char (point-min))
            (search-forward (getenv "NEXA_ACTION_AT"))
            (nexa-test--wait timeout (lambda ()
                                       (setq titles (nexa-test--action-titles))
                                       (seq-find (lambda (title) (string-search wanted title)) titles)))
            (push (cons 'actions_before (vconcat titles)) record)
            (unless (seq-find (lambda (title) (string-search wanted title)) titles)
              (error "No code action with %s (actions: %S)" wanted titles))
            (setq count (length nexa-test--messages))
            (setq nexa-test--wanted wanted)
            ;; as from the keyboard: a list here would make eglot open a popup menu
            (let ((last-nonmenu-event ?x))
              (eglot-code-actions (line-beginning-position) (line-end-position) nil t))
            (nexa-test--wait timeout (lambda () (nexa-test--message-since count (alist-get 'until step))) t)
            (push (cons 'message (or (nexa-test--message-since count (alist-get 'until step)) :null)) record)
            (push record done)
            (when (eq (alist-get 'message record) :null)
              (error "No message like %s after the action %s" (alist-get 'until step) wanted)))))
    (error (push (cons 'error (format "%S" err)) result)
           (when (getenv "NEXA_EVENTS_DUMP")
             (with-current-buffer (jsonrpc-events-buffer (with-current-buffer buffer (eglot-current-server)))
               (write-region (point-min) (point-max) (getenv "NEXA_EVENTS_DUMP"))))))
  (push (cons 'steps (vconcat (reverse done))) result)
  (push (cons 'nudges (length nexa-test--nudges)) result)
  (push (cons 'questions (vconcat (reverse nexa-test--questions))) result)
  (push (cons 'messages (vconcat (reverse nexa-test--messages))) result)
  (advice-remove 'message #'nexa-test--record-message)
  (with-temp-file (getenv "NEXA_TEST_RESULT")
    (insert (json-encode result)))
  (kill-emacs 0))
