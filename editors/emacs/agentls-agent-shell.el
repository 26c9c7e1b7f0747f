;;; agentls-agent-shell.el --- agentls in agent-shell, over ACP  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "29.1") (agent-shell "0.20") (acp "0.5"))
;; Keywords: tools, convenience

;;; Commentary:

;; agent-shell (https://github.com/xenodium/agent-shell) is an Emacs shell for
;; any agent that speaks the Agent Client Protocol.  `agentls acp' is one:
;; this file adds it to agent-shell's agents.
;;
;;   (with-eval-after-load 'agent-shell
;;     (require 'agentls-agent-shell)
;;     (agentls-agent-shell-register))
;;
;; Then M-x agent-shell and pick agentls, or M-x agentls-agent-shell.
;; The model comes from the workspace's .agentls.toml, the user config or
;; the environment; `agentls-agent-shell-environment' adds variables, e.g.
;;
;;   (setq agentls-agent-shell-environment
;;         '("AGENTLS_MODEL=claude-sonnet-4-5" "AGENTLS_PROVIDER=anthropic"
;;           "AGENTLS_API_KEY_ENV=ANTHROPIC_API_KEY"))
;;
;; Permission prompts, edits (fs/write_text_file), terminals, /compact and
;; the ask / auto-edit / yolo modes come through agent-shell's own UI.

;;; Code:

(require 'seq)

(declare-function agent-shell-make-agent-config "agent-shell")
(declare-function agent-shell-start "agent-shell")
(declare-function acp-make-client "acp")
(defvar agent-shell-agent-configs)

(defgroup agentls-agent-shell nil
  "agentls in agent-shell."
  :group 'tools
  :prefix "agentls-agent-shell-")

(defcustom agentls-agent-shell-command '("agentls" "acp")
  "The command starting agentls' ACP face."
  :type '(repeat string))

(defcustom agentls-agent-shell-environment nil
  "Extra environment for agentls, as a list of \"NAME=value\" strings."
  :type '(repeat string))

(defun agentls-agent-shell-make-config ()
  "The agent-shell configuration of agentls."
  (agent-shell-make-agent-config
   :identifier 'agentls
   :mode-line-name "agentls"
   :buffer-name "agentls"
   :shell-prompt "agentls> "
   :shell-prompt-regexp "agentls> "
   :client-maker (lambda (buffer)
                   (acp-make-client :command (car agentls-agent-shell-command)
                                    :command-params (cdr agentls-agent-shell-command)
                                    :environment-variables agentls-agent-shell-environment
                                    :context-buffer buffer))
   :install-instructions "Install agentls (pip install agentls, or ./scripts/setup in its repository) so that `agentls' is on PATH."))

;;;###autoload
(defun agentls-agent-shell-register ()
  "Add agentls to `agent-shell-agent-configs' (M-x agent-shell offers it)."
  (require 'agent-shell)
  (unless (functionp agent-shell-agent-configs)
    (setq agent-shell-agent-configs
          (cons (agentls-agent-shell-make-config)
                (seq-remove (lambda (c) (and (listp c) (eq (alist-get :identifier c) 'agentls)))
                            agent-shell-agent-configs)))))

;;;###autoload
(defun agentls-agent-shell ()
  "Start an agent-shell talking to `agentls acp'."
  (interactive)
  (require 'agent-shell)
  (agent-shell-start :config (agentls-agent-shell-make-config)))

(provide 'agentls-agent-shell)

;;; agentls-agent-shell.el ends here
