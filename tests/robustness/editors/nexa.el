;;; nexa.el --- Nexa sources with eglot (tested with Emacs 28.2 and eglot 1.9)
;; Put this in your init file; `nexa-lsp' must be on the PATH (or `exec-path').

(require 'eglot)

(define-derived-mode nexa-mode prog-mode "Nexa"
  "Major mode for Nexa sources."
  (setq-local comment-start "// ")
  (setq-local comment-end "")
  ;; indent with 4 spaces, as the server's formatter does with these options
  (setq-local indent-tabs-mode nil)
  (setq-local tab-width 4))
(add-to-list 'auto-mode-alist '("\\.nx\\(lib\\)?\\'" . nexa-mode))

(add-to-list 'eglot-server-programs '(nexa-mode . ("nexa-lsp")))
(add-hook 'nexa-mode-hook #'eglot-ensure)

;; optional: answers to workspace/configuration
(setq-default eglot-workspace-configuration
              '(:nexa (:diagnostics (:migrationHints t))))
