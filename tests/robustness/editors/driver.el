;;; driver.el --- Test driver (not part of the configuration).
;; Opens NEXA_TEST_FILE the way a user would (nexa.el is already loaded), lets eglot-ensure
;; connect, waits for flymake diagnostics, asks for a hover at NEXA_HOVER_LINE/NEXA_HOVER_COL
;; (1-based line, 0-based column), formats the buffer with `eglot-format-buffer' and writes
;; what arrived to NEXA_TEST_RESULT as JSON.
(require 'json)
(require 'flymake)

(let* ((timeout (/ (string-to-number (or (getenv "NEXA_TEST_TIMEOUT_MS") "30000")) 1000.0))
       (result (list (cons 'emacs emacs-version)))
       (buffer (find-file (getenv "NEXA_TEST_FILE"))))
  (condition-case err
      (with-current-buffer buffer
        (push (cons 'mode (symbol-name major-mode)) result)
        ;; eglot-ensure connects from post-command-hook: a batch Emacs has no command loop
        (run-hooks 'post-command-hook)
        (let ((deadline (+ (float-time) timeout)))
          (while (and (null (flymake-diagnostics)) (< (float-time) deadline))
            (accept-process-output nil 0.05)))
        (push (cons 'managed (if (bound-and-true-p eglot--managed-mode) t :json-false)) result)
        (push (cons 'diagnostics
                    (vconcat
                     (mapcar (lambda (d)
                               (list (cons 'line (1- (line-number-at-pos (flymake-diagnostic-beg d))))
                                     (cons 'type (format "%s" (flymake-diagnostic-type d)))
                                     (cons 'message (flymake-diagnostic-text d))))
                             (flymake-diagnostics))))
              result)
        (goto-char (point-min))
        (forward-line (1- (string-to-number (getenv "NEXA_HOVER_LINE"))))
        (forward-char (string-to-number (getenv "NEXA_HOVER_COL")))
        (let ((hover (jsonrpc-request (eglot--current-server-or-lose) :textDocument/hover
                                      (eglot--TextDocumentPositionParams))))
          (push (cons 'hover (or hover :null)) result))
        (eglot-format-buffer)
        (push (cons 'formatted (buffer-substring-no-properties (point-min) (point-max))) result))
    (error (push (cons 'error (format "%S" err)) result)))
  (with-temp-file (getenv "NEXA_TEST_RESULT")
    (insert (json-encode result)))
  (kill-emacs 0))
