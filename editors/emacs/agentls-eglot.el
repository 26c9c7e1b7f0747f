;;; agentls-eglot.el --- The agentls coding agent through eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; agentls is a coding agent that runs as a language server (`agentls lsp').
;; This file registers it with eglot and adds a few commands:
;;
;;   M-x agentls-ask       ask the agent (with an active region, the region
;;                         goes along as a `resource' block with the file URI)
;;   M-x agentls-steer     add guidance to the running turn
;;   M-x agentls-stop      interrupt the running turn
;;   M-x agentls-compact   compact the conversation
;;   M-x agentls-new-session
;;
;; The agent's work streams into the *agentls* buffer: its answer, its
;; thoughts (dimmed), one line per tool call updated in place, edits as
;; "+n -m", the plan as a checklist, and the context use in the header line.
;;
;; Setup:
;;
;;   (require 'agentls-eglot)
;;   (setq agentls-model "claude-sonnet-4-5"
;;         agentls-provider "anthropic"
;;         agentls-api-key-env "ANTHROPIC_API_KEY")
;;   (agentls-eglot-setup '(python-mode python-ts-mode))
;;
;; then M-x eglot in a buffer of one of those modes.  Eglot runs one server
;; per buffer, so those modes are served by agentls instead of your usual
;; language server; use a mode you can spare, or agent-shell with
;; `agentls acp' (see agentls-agent-shell.el).
;;
;; Edits reach buffers as `workspace/applyEdit'; agentls asks before them
;; itself (`agentls-approval'), so you may want
;; (setq eglot-confirm-server-initiated-edits nil).
;; Commands run in the server (the client declares no terminal).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'eglot)

(defgroup agentls nil
  "The agentls coding agent through eglot."
  :group 'tools
  :prefix "agentls-")

(defcustom agentls-command '("agentls" "lsp")
  "How to start the agentls language server."
  :type '(repeat string))

(defcustom agentls-model nil
  "Model name sent as the `model' initialization option (nil: server config)."
  :type '(choice (const nil) string))

(defcustom agentls-base-url nil
  "An OpenAI-compatible base URL (`baseUrl'), or nil."
  :type '(choice (const nil) string))

(defcustom agentls-provider nil
  "The provider: \"openai\", \"anthropic\" or \"local\" (nil: server config)."
  :type '(choice (const nil) (const "openai") (const "anthropic") (const "local")))

(defcustom agentls-api-key-env nil
  "The NAME of the environment variable holding the API key (`apiKeyEnv').
The key itself is never sent."
  :type '(choice (const nil) string))

(defcustom agentls-approval nil
  "When the agent asks first: \"ask\", \"auto-edit\" or \"yolo\" (nil: server config)."
  :type '(choice (const nil) (const "ask") (const "auto-edit") (const "yolo")))

(defcustom agentls-extra-initialization-options nil
  "More initialization options, a plist such as (:maxIterations 40)."
  :type 'plist)

(defcustom agentls-permission-function #'agentls-ask-permission
  "Function called with (TITLE KIND OPTIONS) to answer a permission request.
OPTIONS is a list of plists (:optionId :name :kind).  It returns an
optionId string, or nil to cancel."
  :type 'function)

(defface agentls-header '((t :inherit font-lock-keyword-face :weight bold))
  "Face of the You / agentls headers.")

(defface agentls-thought '((t :inherit shadow))
  "Face of the model's thoughts.")

(defface agentls-ok '((t :inherit success))
  "Face of a completed tool call.")

(defface agentls-failed '((t :inherit error))
  "Face of a failed tool call or an error.")

(defface agentls-pending '((t :inherit warning))
  "Face of a running tool call.")

;;;; The server

(defclass agentls-server (eglot-lsp-server) ()
  :documentation "An eglot connection to `agentls lsp'.")

(defun agentls--initialization-options ()
  "The initializationOptions: PROTOCOL's camelCase keys, non-nil values only."
  (let ((options (copy-sequence agentls-extra-initialization-options)))
    (dolist (pair `((:model . ,agentls-model) (:baseUrl . ,agentls-base-url)
                    (:provider . ,agentls-provider) (:apiKeyEnv . ,agentls-api-key-env)
                    (:approval . ,agentls-approval)))
      (when (cdr pair)
        (setq options (plist-put options (car pair) (cdr pair)))))
    (or options (make-hash-table))))

(cl-defmethod eglot-initialization-options ((_server agentls-server))
  "Send the agentls settings."
  (agentls--initialization-options))

(cl-defmethod eglot-client-capabilities :around ((_server agentls-server))
  "Declare what this client does for the agent (capabilities.experimental.agent)."
  (let ((caps (cl-call-next-method)))
    (plist-put caps :experimental
               (list :agent (list :terminal :json-false :permissions t :updates t)))))

;;;###autoload
(defun agentls-eglot-setup (modes)
  "Serve the major MODES (a mode or a list of modes) with agentls in eglot."
  (let ((modes (if (listp modes) modes (list modes))))
    (setq eglot-server-programs
          (cons (cons modes (cons 'agentls-server agentls-command))
                (cl-remove-if (lambda (entry) (and (consp (cdr entry))
                                                   (eq (cadr entry) 'agentls-server)))
                              eglot-server-programs)))))

(defvar agentls--sessions (make-hash-table :test #'eq :weakness 'key)
  "The current session id of each server.")

(defun agentls--server ()
  "The agentls server of the current buffer, or a user error."
  (let ((server (eglot-current-server)))
    (unless (cl-typep server 'agentls-server)
      (user-error "No agentls server here: run M-x eglot in a buffer of a mode given to `agentls-eglot-setup'"))
    server))

(defun agentls--session (server)
  "The session of SERVER, created with agent/newSession on first use."
  (or (gethash server agentls--sessions)
      (let ((result (jsonrpc-request server :agent/newSession
                                     (list :cwd (expand-file-name default-directory)))))
        (puthash server (plist-get result :sessionId) agentls--sessions))))

(defun agentls--flush-changes (server)
  "Send the edits eglot has not yet sent to SERVER, in every buffer it manages.
eglot batches buffer changes and sends `textDocument/didChange' once Emacs
has been idle for `eglot-send-changes-idle-time'; a turn started before
that would read the old text.  eglot has no public function for this, so
this calls its own (present from eglot 1.9 to the Emacs 30 version)."
  (dolist (buffer (eglot--managed-buffers server))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (eglot--signal-textDocument/didChange)))))

(defun agentls--uri (file)
  "The file:// URI of FILE."
  (if (fboundp 'eglot-path-to-uri)
      (funcall 'eglot-path-to-uri file)
    (funcall 'eglot--path-to-uri file)))

;;;; The chat buffer

(defvar agentls-turn-done-functions nil
  "Called with (RESULT ERROR) after each turn.")

(defvar-local agentls--last nil "The kind of the last thing written.")
(defvar-local agentls--header-open nil "Non-nil once the agent header of this turn is written.")
(defvar-local agentls--tools nil "toolCallId -> (START END TITLE STATUS).")
(defvar-local agentls--plan nil "(START . END) of this turn's plan.")
(defvar-local agentls--usage nil "(USED . SIZE) tokens.")
(defvar-local agentls--status nil "\"running\" while a turn runs.")
(defvar-local agentls--title nil "The session title.")

(define-derived-mode agentls-chat-mode special-mode "agentls"
  "The agentls chat: what the agent says and does."
  (setq-local truncate-lines nil)
  (setq-local word-wrap t)
  (setq-local header-line-format '(:eval (agentls--header-line))))

(defun agentls--short (n)
  "N tokens as a short string (12345 -> 12.3k)."
  (cond ((< n 1000) (number-to-string n))
        ((< n 1000000) (replace-regexp-in-string "\\.0k" "k" (format "%.1fk" (/ n 1000.0))))
        (t (replace-regexp-in-string "\\.0M" "M" (format "%.1fM" (/ n 1000000.0))))))

(defun agentls--header-line ()
  "Title, status and context use."
  (string-join
   (delq nil (list (or agentls--title "agentls")
                   agentls--status
                   (when (and agentls--usage (> (cdr agentls--usage) 0))
                     (format "ctx %s/%s (%d%%)" (agentls--short (car agentls--usage))
                             (agentls--short (cdr agentls--usage))
                             (round (* 100.0 (/ (float (car agentls--usage)) (cdr agentls--usage))))))))
   " · "))

(defun agentls-chat-buffer ()
  "The *agentls* buffer."
  (or (get-buffer "*agentls*")
      (with-current-buffer (get-buffer-create "*agentls*")
        (agentls-chat-mode)
        (setq agentls--tools (make-hash-table :test #'equal))
        (current-buffer))))

(defmacro agentls--in-chat (&rest body)
  "Run BODY at the end of the chat buffer; windows at its end follow it."
  (declare (indent 0) (debug t))
  `(with-current-buffer (agentls-chat-buffer)
     (let* ((inhibit-read-only t)
            (following (cl-remove-if-not (lambda (w) (= (window-point w) (point-max)))
                                         (get-buffer-window-list (current-buffer) nil t))))
       (save-excursion
         (goto-char (point-max))
         ,@body)
       (dolist (w following)
         (set-window-point w (point-max))))))

(defun agentls--separate (kind)
  "Start a KIND block: a newline, and a blank line between different kinds."
  (unless (bolp) (insert "\n"))
  (when (and agentls--last (not (eq agentls--last 'header))
             (not (and (eq kind 'tool) (eq agentls--last 'tool)))
             (> (point) (point-min)))
    (insert "\n"))
  (setq agentls--last kind))

(defun agentls--agent-header ()
  "The \"## agentls\" header, once per turn."
  (unless agentls--header-open
    (setq agentls--header-open t)
    (agentls--separate 'header)
    (insert (propertize "## agentls" 'face 'agentls-header) "\n")))

(defun agentls--text (content)
  "The text of an ACP content block."
  (pcase (plist-get content :type)
    ("text" (or (plist-get content :text) ""))
    ("resource_link" (format "[%s]" (plist-get content :uri)))
    ("resource" (or (plist-get (plist-get content :resource) :text) ""))
    ("image" "[image]")
    (_ "")))

(defun agentls--stream (kind text)
  "Append TEXT to the current KIND block (a message or a thought)."
  (agentls--agent-header)
  (unless (eq agentls--last kind)
    (agentls--separate kind))
  (insert (if (eq kind 'thought) (propertize text 'face 'agentls-thought) text)))

(defun agentls--count-lines (text)
  "A table of line -> count for TEXT."
  (let ((table (make-hash-table :test #'equal)))
    (dolist (line (split-string (or text "") "\n" t))
      (puthash line (1+ (gethash line table 0)) table))
    table))

(defun agentls-diff-stats (old new)
  "Lines added and removed from OLD to NEW, as (ADDED . REMOVED).
Counted as lines of one text missing from the other."
  (let ((a (agentls--count-lines old)) (b (agentls--count-lines new))
        (added 0) (removed 0))
    (maphash (lambda (line n) (setq added (+ added (max 0 (- n (gethash line a 0)))))) b)
    (maphash (lambda (line n) (setq removed (+ removed (max 0 (- n (gethash line b 0)))))) a)
    (cons added removed)))

(defun agentls--relative (path)
  "PATH relative to the chat's directory when it is inside it."
  (if (and path (string-prefix-p (expand-file-name default-directory) path))
      (file-relative-name path default-directory)
    (or path "?")))

(defun agentls--tool-text (title status content)
  "The lines of a tool call: TITLE with a STATUS mark, then its CONTENT."
  (concat
   "▸ " title " "
   (pcase status
     ("completed" (propertize "✓" 'face 'agentls-ok))
     ("failed" (propertize "✗" 'face 'agentls-failed))
     (_ (propertize "…" 'face 'agentls-pending)))
   "\n"
   (mapconcat
    (lambda (c)
      (pcase (plist-get c :type)
        ("diff" (let ((stats (agentls-diff-stats (plist-get c :oldText) (plist-get c :newText))))
                  (format "    ✎ %s %s %s\n" (agentls--relative (plist-get c :path))
                          (propertize (format "+%d" (car stats)) 'face 'agentls-ok)
                          (propertize (format "−%d" (cdr stats)) 'face 'agentls-failed))))
        ("content" (if (equal status "failed")
                       (propertize (format "    │ %s\n" (car (split-string (agentls--text (plist-get c :content))
                                                                           "\n")))
                                   'face 'agentls-thought)
                     ""))
        (_ "")))
    content "")))

(defun agentls--tool (update)
  "Write or rewrite the line of the tool call in UPDATE."
  (let* ((id (plist-get update :toolCallId))
         (known (gethash id agentls--tools))
         (title (or (plist-get update :title) (nth 2 known) "tool"))
         (status (or (plist-get update :status) (nth 3 known) "pending"))
         (content (append (or (plist-get update :content) (nth 4 known)) nil)))
    (if known
        (let ((start (nth 0 known)) (end (nth 1 known)))
          (goto-char start)
          (delete-region start end)
          (insert (agentls--tool-text title status content))
          (set-marker end (point))
          (puthash id (list start end title status content) agentls--tools))
      (agentls--agent-header)
      (agentls--separate 'tool)
      (let ((start (point-marker)))
        (insert (agentls--tool-text title status content))
        (puthash id (list start (point-marker) title status content) agentls--tools)))))

(defun agentls--plan-text (entries)
  "The plan ENTRIES as a checklist."
  (concat "Plan:\n"
          (mapconcat (lambda (e)
                       (format "- %s %s\n"
                               (pcase (plist-get e :status)
                                 ("completed" "[x]") ("in_progress" "[~]") (_ "[ ]"))
                               (plist-get e :content)))
                     entries "")))

(defun agentls--plan-update (entries)
  "Write the plan ENTRIES, replacing this turn's plan."
  (if agentls--plan
      (let ((start (car agentls--plan)) (end (cdr agentls--plan)))
        (goto-char start)
        (delete-region start end)
        (insert (agentls--plan-text entries))
        (set-marker end (point)))
    (agentls--agent-header)
    (agentls--separate 'plan)
    (let ((start (point-marker)))
      (insert (agentls--plan-text entries))
      (setq agentls--plan (cons start (point-marker))))))

(defun agentls--notice (text &optional face)
  "A line of TEXT in FACE."
  (agentls--separate 'notice)
  (insert (propertize text 'face (or face 'font-lock-comment-face)) "\n"))

(defun agentls-render (update)
  "Write one ACP SessionUpdate (a plist) into the chat buffer."
  (agentls--in-chat
    (pcase (plist-get update :sessionUpdate)
      ("agent_message_chunk" (agentls--stream 'message (agentls--text (plist-get update :content))))
      ("agent_thought_chunk" (agentls--stream 'thought (agentls--text (plist-get update :content))))
      ("user_message_chunk" (if (eq agentls--last 'user)
                                (insert (agentls--text (plist-get update :content)))
                              (agentls--begin (agentls--text (plist-get update :content)))))
      ((or "tool_call" "tool_call_update") (agentls--tool update))
      ("plan" (agentls--plan-update (append (plist-get update :entries) nil)))
      ("usage_update" (setq agentls--usage (cons (or (plist-get update :used) 0)
                                                 (or (plist-get update :size) 0)))
       (force-mode-line-update t))
      ("session_info_update" (when (stringp (plist-get update :title))
                               (setq agentls--title (plist-get update :title))
                               (force-mode-line-update t)))
      ("compaction_update"
       (let* ((meta (plist-get (plist-get update :_meta) :agentls))
              (before (plist-get meta :tokensBefore)) (after (plist-get meta :tokensAfter)))
         (pcase (plist-get update :status)
           ("completed" (when (and before after (or (/= before after)
                                                    (not (equal (plist-get meta :messagesBefore)
                                                                (plist-get meta :messagesAfter)))))
                          (agentls--notice (format "⟲ context compacted (%s → %s tokens)"
                                                   (agentls--short before) (agentls--short after)))))
           ("failed" (agentls--notice "✗ compaction failed" 'agentls-failed))))))))

(defun agentls--begin (text)
  "Start a turn showing the user's TEXT (in the chat buffer)."
  (agentls--separate 'user)
  (insert (propertize "## You" 'face 'agentls-header) "\n" text)
  (setq agentls--last 'user
        agentls--header-open nil
        agentls--plan nil))

(defun agentls--end (result error)
  "Finish the turn with its RESULT plist, or the jsonrpc ERROR."
  (agentls--in-chat
    (setq agentls--status nil)
    (cond
     (error (agentls--notice (format "✗ %s" (or (plist-get error :message) error)) 'agentls-failed))
     (t
      (let ((final (plist-get result :finalResponse)))
        (when (and (not agentls--header-open) (stringp final) (not (string-empty-p final)))
          (agentls--stream 'message final)))
      (when (eq (plist-get result :interrupted) t)
        (agentls--notice "⏹ interrupted" 'agentls-pending))
      (when-let ((err (plist-get result :error)))
        (agentls--notice (format "✗ %s" (if (stringp err) err (plist-get err :message))) 'agentls-failed))))
    (unless (bolp) (insert "\n"))
    (force-mode-line-update t))
  (run-hook-with-args 'agentls-turn-done-functions result error))

;;;; Server -> client

(cl-defmethod eglot-handle-notification ((_server agentls-server) (_method (eql 'agent/update))
                                         &key update &allow-other-keys)
  "Render an agent/update."
  (when update (agentls-render update)))

(defun agentls-ask-permission (title kind options)
  "Ask with `completing-read' whether the agent may do TITLE (of KIND).
OPTIONS are the server's; return the chosen optionId or nil."
  (let* ((names (mapcar (lambda (o) (cons (plist-get o :name) (plist-get o :optionId))) options))
         (choice (condition-case nil
                     (completing-read (format "agentls asks to %s — %s: " kind title) names nil t)
                   (quit nil))))
    (cdr (assoc choice names))))

(cl-defmethod eglot-handle-request ((_server agentls-server) (_method (eql 'agent/requestPermission))
                                    &key toolCall options &allow-other-keys)
  "Answer agent/requestPermission through `agentls-permission-function'."
  (let ((option-id (funcall agentls-permission-function
                            (or (plist-get toolCall :title) "a tool")
                            (or (plist-get toolCall :kind) "act")
                            (append options nil))))
    (if option-id
        (list :outcome (list :outcome "selected" :optionId option-id))
      (list :outcome (list :outcome "cancelled")))))

;;;; Commands

;;;###autoload
(defun agentls-ask (prompt &optional beg end)
  "Ask the agent PROMPT; with BEG and END (the region), send that text along."
  (interactive (list (read-string (if (use-region-p) "Ask agentls about the region: " "Ask agentls: "))
                     (when (use-region-p) (region-beginning))
                     (when (use-region-p) (region-end))))
  (let* ((server (agentls--server))
         (session (agentls--session server))
         (root (expand-file-name default-directory))
         (_flushed (agentls--flush-changes server))
         (params
          (if (and beg end buffer-file-name)
              (vector (list :type "text" :text prompt)
                      (list :type "resource"
                            :resource (list :uri (agentls--uri buffer-file-name) :mimeType "text/plain"
                                            :text (buffer-substring-no-properties beg end))))
            prompt)))
    (let ((shown (if (vectorp params)
                     (format "%s\n[region of %s]" prompt (file-name-nondirectory buffer-file-name))
                   prompt)))
      (with-current-buffer (agentls-chat-buffer)
        (setq default-directory root))
      (agentls--in-chat
        (agentls--begin shown)
        (setq agentls--status "running…")))
    (display-buffer (agentls-chat-buffer))
    (jsonrpc-async-request server :agent/turn (list :sessionId session :prompt params)
                           :success-fn (lambda (result) (agentls--end result nil))
                           :error-fn (lambda (error) (agentls--end nil error))
                           :timeout nil)))

(defun agentls-steer (text)
  "Add TEXT as guidance to the running turn."
  (interactive "sSteer agentls: ")
  (let* ((server (agentls--server))
         (_flushed (agentls--flush-changes server))
         (result (jsonrpc-request server :agent/steer
                                  (list :sessionId (agentls--session server) :text text))))
    (agentls--in-chat (agentls--notice (format "↪ steer (%s): %s" (plist-get result :outcome) text)))))

(defun agentls-stop ()
  "Interrupt the running turn."
  (interactive)
  (let ((server (agentls--server)))
    (jsonrpc-request server :agent/interrupt (list :sessionId (agentls--session server)))))

(defun agentls-compact (&optional focus)
  "Compact the conversation, keeping FOCUS in detail."
  (interactive "sCompact, keeping (empty for nothing in particular): ")
  (let* ((server (agentls--server))
         (params (list :sessionId (agentls--session server))))
    (when (and focus (not (string-empty-p focus)))
      (setq params (plist-put params :focus focus)))
    (let ((result (jsonrpc-request server :agent/compress params :timeout 600)))
      (message "agentls: %s → %s tokens" (plist-get result :tokensBefore) (plist-get result :tokensAfter)))))

(defun agentls-new-session ()
  "Start a new session and empty the chat."
  (interactive)
  (let ((server (agentls--server)))
    (remhash server agentls--sessions)
    (agentls--session server)
    (with-current-buffer (agentls-chat-buffer)
      (let ((inhibit-read-only t))
        (erase-buffer)
        (clrhash agentls--tools)
        (setq agentls--last nil agentls--header-open nil agentls--plan nil
              agentls--usage nil agentls--title nil)))))

(provide 'agentls-eglot)

;;; agentls-eglot.el ends here
