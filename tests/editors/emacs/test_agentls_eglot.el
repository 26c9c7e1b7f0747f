;;; test_agentls_eglot.el --- agentls-eglot against the real `agentls lsp'  -*- lexical-binding: t; -*-

;; Run by tests/editors/test_emacs.py:
;;   emacs --batch --no-init-file -L editors/emacs -l tests/editors/emacs/test_agentls_eglot.el
;; with AGENTLS_CMD, AGENTLS_SCRIPTED_URL and the workspace as the current directory.
;; Prints PASS, or FAIL: ... and exits 1.

(require 'cl-lib)
(require 'subr-x)
(require 'agentls-eglot)

(defun agentls-test-fail (fmt &rest args)
  (princ (concat "FAIL: " (apply #'format fmt args) "\n") #'external-debugging-output)
  (kill-emacs 1))

(defun agentls-test-wait (seconds pred what)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred)
      (agentls-test-fail "timed out after %ss waiting for %s" seconds what))))

(defun agentls-test-chat ()
  (with-current-buffer (agentls-chat-buffer) (buffer-substring-no-properties (point-min) (point-max))))

(defun agentls-test-has (line)
  (unless (member line (split-string (agentls-test-chat) "\n"))
    (agentls-test-fail "the chat has no line %S; it shows:\n%s" line (agentls-test-chat))))

(condition-case err
    (let* ((ws (file-name-as-directory (expand-file-name default-directory)))
           (asked nil)
           (done nil))
      (setq agentls-command (append (json-parse-string (getenv "AGENTLS_CMD") :array-type 'list) nil)
            agentls-model "scripted"
            agentls-base-url (getenv "AGENTLS_SCRIPTED_URL")
            agentls-provider "openai"
            agentls-api-key-env "AGENTLS_TEST_KEY"
            agentls-approval "ask"
            eglot-confirm-server-initiated-edits nil
            agentls-permission-function (lambda (title kind options)
                                          (push (list title kind (mapcar (lambda (o) (plist-get o :optionId))
                                                                         options))
                                                asked)
                                          "allow_once"))
      (add-hook 'agentls-turn-done-functions (lambda (result error) (setq done (list result error))))
      (agentls-eglot-setup '(text-mode))
      (setq project-find-functions (list (lambda (_dir) (cons 'transient ws))))
      (find-file (expand-file-name "notes.txt" ws))
      (text-mode)
      (apply #'eglot (eglot--guess-contact))
      (agentls-test-wait 30 (lambda () (eglot-current-server)) "eglot to connect to agentls")
      (unless (cl-typep (eglot-current-server) 'agentls-server)
        (agentls-test-fail "the server is not an agentls-server: %S" (eglot-current-server)))

      ;; A turn: permission asked and allowed, the edit applied, the answer streamed into *agentls*.
      (agentls-ask "Write hello.txt")
      (agentls-test-wait 30 (lambda () done) "the turn to answer")
      (when (cadr done) (agentls-test-fail "the turn failed: %S" (cadr done)))
      (princ (format "chat:\n%s\n" (agentls-test-chat)))
      (unless (equal (plist-get (car done) :completed) t)
        (agentls-test-fail "not completed: %S" (car done)))
      (agentls-test-has "## You")
      (agentls-test-has "Write hello.txt")
      (agentls-test-has "## agentls")
      (agentls-test-has "▸ Write hello.txt ✓")
      (agentls-test-has "    ✎ hello.txt +1 −0")
      (agentls-test-has "Wrote hello.txt for you.")
      (unless (and asked (equal (nth 1 (car asked)) "edit") (member "allow_once" (nth 2 (car asked))))
        (agentls-test-fail "the permission request was not asked as expected: %S" asked))
      (let ((text (with-current-buffer (find-file-noselect (expand-file-name "hello.txt" ws))
                    (buffer-string))))
        (unless (string= text "hello from emacs\n")
          (agentls-test-fail "hello.txt has %S" text)))

      ;; A region goes along as a resource block.
      (setq done nil)
      (with-current-buffer (find-file-noselect (expand-file-name "notes.txt" ws))
        (agentls-ask "Summarise this" (point-min) (point-max)))
      (agentls-test-wait 30 (lambda () done) "the region turn to answer")
      (agentls-test-has "[region of notes.txt]")
      (agentls-test-has "A short note.")
      ;; An edit eglot has not sent yet (it batches changes until Emacs is idle; the idle time is
      ;; made long so it never fires here): agentls-ask must flush it, so the agent reads this text.
      (setq done nil)
      (with-current-buffer (find-file-noselect (expand-file-name "notes.txt" ws))
        (setq-local eglot-send-changes-idle-time 3600)
        (goto-char (point-max))
        (insert "Unsaved line typed just before asking.\n")
        (unless eglot--recent-changes (agentls-test-fail "eglot already sent the change"))
        (agentls-ask "Read notes.txt"))
      (agentls-test-wait 30 (lambda () done) "the read turn to answer")
      (when (cadr done) (agentls-test-fail "the read turn failed: %S" (cadr done)))
      (agentls-test-has "Read it.")
      (princ "PASS emacs eglot\n")
      (kill-emacs 0))
  (error (agentls-test-fail "error: %S" err)))

;;; test_agentls_eglot.el ends here
