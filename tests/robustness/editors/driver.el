;;; driver.el --- Test driver (not part of the configuration).
;; Opens NEXA_TEST_FILE the way a user would (nexa.el is already loaded), lets eglot-ensure
;; connect, waits until flymake has a diagnostic for every code in NEXA_EXPECT_CODES (comma
;; separated), reads the buffer's flymake diagnostics list (`flymake-show-buffer-diagnostics'),
;; asks for a hover at NEXA_HOVER_LINE/NEXA_HOVER_COL (1-based line, 0-based column), formats
;; the buffer with `eglot-format-buffer' and writes what arrived to NEXA_TEST_RESULT as JSON.
(require 'json)
(require 'flymake)
(require 'seq)

(defun nexa-test--expected-codes ()
  (split-string (or (getenv "NEXA_EXPECT_CODES") "") "[, ]+" t))

(defun nexa-test--all-expected-arrived ()
  "Non-nil when every expected code is in a flymake diagnostic (any, when none is expected)."
  (let ((texts (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))
        (codes (nexa-test--expected-codes)))
    (and texts
         (seq-every-p (lambda (code) (seq-some (lambda (text) (string-match-p (regexp-quote code) text)) texts))
                      codes))))

(defun nexa-test--diagnostics-list ()
  "The text of the buffer's flymake diagnostics list, as `flymake-show-buffer-diagnostics' shows it."
  (flymake-show-buffer-diagnostics)
  (let ((list (get-buffer (flymake--diagnostics-buffer-name))))
    (if (null list)
        :null
      (with-current-buffer list
        (revert-buffer)
        (buffer-substring-no-properties (point-min) (point-max))))))

(let* ((timeout (/ (string-to-number (or (getenv "NEXA_TEST_TIMEOUT_MS") "30000")) 1000.0))
       (result (list (cons 'emacs emacs-version)))
       (buffer (find-file (getenv "NEXA_TEST_FILE"))))
  (condition-case err
      (with-current-buffer buffer
        (push (cons 'mode (symbol-name major-mode)) result)
        ;; eglot-ensure connects from post-command-hook: a batch Emacs has no command loop
        (run-hooks 'post-command-hook)
        (let ((deadline (+ (float-time) timeout)))
          (while (and (not (nexa-test--all-expected-arrived)) (< (float-time) deadline))
            (accept-process-output nil 0.05)))
        (push (cons 'expected_arrived (if (nexa-test--all-expected-arrived) t :json-false)) result)
        (push (cons 'managed (if (bound-and-true-p eglot--managed-mode) t :json-false)) result)
        (push (cons 'diagnostics
                    (vconcat
                     (mapcar (lambda (d)
                               (list (cons 'line (1- (line-number-at-pos (flymake-diagnostic-beg d))))
                                     (cons 'type (format "%s" (flymake-diagnostic-type d)))
                                     (cons 'message (flymake-diagnostic-text d))))
                             (flymake-diagnostics))))
              result)
        (push (cons 'diagnostics_list (save-window-excursion (nexa-test--diagnostics-list))) result)
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
