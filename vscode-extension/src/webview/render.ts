/**
 * The chat view's DOM. `ChatApp` owns the layout, feeds every incoming
 * message to the `ChatModel` and patches only what changed (each transcript
 * item is keyed by id and re-rendered when its `rev` moves).
 *
 * Browser-only, no `vscode` import: it talks to the extension solely through
 * the `post` callback (`ToExtension` messages).
 */

import { childSessionsOf } from '../acp';
import type { ToExtension, ToWebview } from '../protocol';
import { basename, clip, compactionHtml, exitLabel, noticeHtml, permissionHtml, PLAN_ICON, thoughtHtml, toolHtml, userHtml } from './cards';
import { icon } from './icons';
import { escapeHtml, renderMarkdown } from './markdown';
import { CommandMenu } from './commands';
import { MentionMenu } from './mentions';
import { ChatModel, formatTokens, relativeTime, usagePercent, type Item } from './state';

export interface PersistedState {
  draft?: string;
  /** Send the active file and selection with each prompt (the composer's toggle). */
  includeContext?: boolean;
}

export interface ChatAppOptions {
  post: (msg: ToExtension) => void;
  getState?: () => PersistedState | undefined;
  setState?: (s: PersistedState) => void;
  /** Render synchronously after each message (tests); default batches per frame. */
  sync?: boolean;
}

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, html?: string): HTMLElementTagNameMap[K] => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (html !== undefined) e.innerHTML = html;
  return e;
};

export class ChatApp {
  readonly model = new ChatModel();
  private readonly rendered = new Map<string, { rev: number; node: HTMLElement }>();
  /** delegate_task call id -> the element its subagents' cards are nested in. */
  private readonly childBoxes = new Map<string, HTMLElement>();
  private scheduled = false;
  /** Scroll to the end on the next render even if the user had scrolled up. */
  private forceScroll = true;
  private searchTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly titleEl: HTMLElement;
  private readonly modelEl: HTMLElement;
  private readonly statusDot: HTMLElement;
  private readonly banner: HTMLElement;
  private readonly sessionsPanel: HTMLElement;
  private readonly sessionSearch: HTMLInputElement;
  private readonly sessionList: HTMLElement;
  private readonly usageEl: HTMLElement;
  private readonly mcpEl: HTMLElement;
  private readonly planEl: HTMLDetailsElement;
  private readonly transcript: HTMLElement;
  private readonly emptyEl: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendBtn: HTMLButtonElement;
  private readonly stopBtn: HTMLButtonElement;
  private readonly compactBtn: HTMLButtonElement;
  private readonly undoBtn: HTMLButtonElement;
  private readonly compactRow: HTMLElement;
  private readonly compactInput: HTMLInputElement;
  private readonly runningEl: HTMLElement;
  private readonly workingEl: HTMLElement;
  private readonly contextBtn: HTMLButtonElement;
  private readonly mentions: MentionMenu;
  private readonly commands: CommandMenu;
  private includeContext = false;
  private contextLabel: string | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly options: ChatAppOptions,
  ) {
    root.innerHTML = `
<div class="app">
  <header class="topbar">
    <div class="title-wrap">
      <span class="status-dot" data-state="starting" title="Starting the agentls server…"></span>
      <span class="session-title">New session</span>
      <span class="model-name"></span>
    </div>
    <div class="top-actions">
      <button class="icon-btn" type="button" data-action="history" title="Sessions" aria-label="Sessions">${icon('history')}</button>
      <button class="icon-btn" type="button" data-action="newSession" title="New session" aria-label="New session">${icon('plus')}</button>
    </div>
  </header>
  <div class="server-banner" hidden></div>
  <section class="sessions-panel" hidden aria-label="Sessions">
    <div class="sessions-head">
      <input class="session-search" type="search" placeholder="Search sessions" aria-label="Search sessions">
      <button class="icon-btn" type="button" data-action="closeSessions" title="Close" aria-label="Close">${icon('close')}</button>
    </div>
    <ul class="session-list" role="listbox"><li class="session-empty">Loading…</li></ul>
  </section>
  <div class="usage" hidden>
    <div class="usage-bar"><div class="usage-fill"></div></div>
    <span class="usage-text"></span>
  </div>
  <div class="mcp-servers" hidden aria-label="MCP servers"></div>
  <details class="plan" open hidden>
    <summary><span class="chev">${icon('chevron')}</span><span class="plan-label">Plan</span><span class="plan-count"></span></summary>
    <ol class="plan-list"></ol>
  </details>
  <main class="transcript" role="log" aria-live="polite">
    <div class="empty">
      <div class="empty-logo">${icon('logo')}</div>
      <div class="empty-title">What should we build?</div>
      <div class="empty-text">Ask agentls to write, fix or explain code in this workspace. It edits files, runs commands and keeps a plan as it goes.</div>
      <div class="empty-keys"><kbd>Enter</kbd> send · <kbd>Shift</kbd>+<kbd>Enter</kbd> new line · <kbd>Esc</kbd> stop</div>
    </div>
  </main>
  <footer class="composer">
    <div class="compact-row" hidden>
      <input class="compact-focus" type="text" placeholder="Focus for the summary (optional)" aria-label="Compaction focus">
      <button class="btn primary small" type="button" data-action="compactConfirm">Compact</button>
      <button class="btn secondary small" type="button" data-action="compactCancel">Cancel</button>
    </div>
    <div class="input-wrap">
      <textarea class="prompt" rows="1" placeholder="Ask agentls…" aria-label="Prompt"></textarea>
      <ul class="mention-menu" role="listbox" aria-label="Files" hidden></ul>
      <ul class="mention-menu command-menu" role="listbox" aria-label="Commands" hidden></ul>
    </div>
    <div class="composer-bar">
      <div class="bar-left">
        <button class="ghost-btn" type="button" data-action="compact" title="Compact the context (summarize older messages)">${icon('compact')}<span>Compact</span></button>
        <button class="ghost-btn" type="button" data-action="undo" title="Undo the last turn's file edits">${icon('undo')}<span>Undo</span></button>
        <button class="ghost-btn context-toggle" type="button" data-action="toggleContext" aria-pressed="false">${icon('read')}<span class="context-label">No active file</span></button>
      </div>
      <div class="bar-right">
        <span class="running" hidden><span class="pulse"></span>Working</span>
        <button class="btn danger-outline" type="button" data-action="stop" title="Stop (Esc)" disabled>${icon('stop')}<span>Stop</span></button>
        <button class="btn primary" type="button" data-action="send" title="Send (Enter)" disabled>${icon('send')}<span>Send</span></button>
      </div>
    </div>
  </footer>
</div>`;
    const q = <T extends HTMLElement>(sel: string): T => root.querySelector(sel) as T;
    this.titleEl = q('.session-title');
    this.modelEl = q('.model-name');
    this.statusDot = q('.status-dot');
    this.banner = q('.server-banner');
    this.sessionsPanel = q('.sessions-panel');
    this.sessionSearch = q('.session-search');
    this.sessionList = q('.session-list');
    this.usageEl = q('.usage');
    this.mcpEl = q('.mcp-servers');
    this.planEl = q('.plan');
    this.transcript = q('.transcript');
    this.emptyEl = q('.empty');
    this.input = q('.prompt');
    this.sendBtn = q('[data-action="send"]');
    this.stopBtn = q('[data-action="stop"]');
    this.compactBtn = q('[data-action="compact"]');
    this.undoBtn = q('[data-action="undo"]');
    this.compactRow = q('.compact-row');
    this.compactInput = q('.compact-focus');
    this.runningEl = q('.running');
    // "The agent is working" dots, kept after the last transcript item while a turn runs.
    this.workingEl = el('div', 'working', '<span></span><span></span><span></span>');
    this.workingEl.setAttribute('aria-label', 'Working');
    this.workingEl.hidden = true;
    this.transcript.appendChild(this.workingEl);

    this.contextBtn = q('[data-action="toggleContext"]');
    this.mentions = new MentionMenu(this.input, q('.mention-menu:not(.command-menu)'), (m) => this.post(m));
    this.commands = new CommandMenu(this.input, q('.command-menu'), (m) => this.post(m));
    const saved = options.getState?.();
    const draft = saved?.draft;
    this.includeContext = saved?.includeContext === true;
    this.renderContextToggle();
    if (draft) this.input.value = draft;
    this.bindEvents();
    this.renderComposer();
    this.autoGrow();
  }

  /** Handle one extension → webview message. */
  receive(msg: ToWebview): void {
    this.model.apply(msg);
    if (msg.type === 'focusInput') {
      if (msg.text) {
        this.input.value = msg.text;
        this.autoGrow();
      }
      this.input.focus();
    }
    if (msg.type === 'sessions') this.sessionsPanel.hidden = false;
    if (msg.type === 'editorContext') {
      this.contextLabel = msg.label;
      this.renderContextToggle();
    }
    if (msg.type === 'mentionResults') this.mentions.results(msg.query, msg.items);
    if (msg.type === 'commandResults') this.commands.results(msg.query, msg.items);
    if (this.options.sync) this.render();
    else this.schedule();
  }

  private post(msg: ToExtension): void {
    this.options.post(msg);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.render();
    });
  }

  // ---- rendering -------------------------------------------------------------

  render(): void {
    const t = this.transcript;
    let stick = this.forceScroll || t.scrollHeight - t.scrollTop - t.clientHeight < 60;
    this.forceScroll = false;
    const dirty = this.model.takeDirty();
    if (dirty.reset) {
      for (const { node } of this.rendered.values()) node.remove();
      this.rendered.clear();
      this.childBoxes.clear();
      this.sessionsPanel.hidden = true;
      stick = true;
    }
    if (dirty.header) this.renderHeader();
    if (dirty.usage) this.renderUsage();
    if (dirty.mcp || dirty.reset) this.renderMcp();
    if (dirty.plan) this.renderPlan();
    if (dirty.sessions) this.renderSessions();
    this.renderItems();
    if (dirty.terminals.size) for (const id of dirty.terminals) this.renderTerminal(id);
    this.renderComposer();
    if (stick) t.scrollTop = t.scrollHeight;
  }

  private renderHeader(): void {
    const m = this.model;
    this.titleEl.textContent = m.title || (m.sessionId ? 'Untitled session' : 'New session');
    this.titleEl.title = m.sessionId ? `Session ${m.sessionId}` : '';
    this.modelEl.textContent = m.server.model ?? '';
    this.modelEl.hidden = !m.server.model;
    const state = m.server.state;
    this.statusDot.dataset.state = state;
    this.statusDot.title =
      state === 'ready' ? 'Connected to the agentls server' : state === 'starting' ? 'Starting the agentls server…' : m.server.message || 'The agentls server is not running';
    const showBanner = state === 'error' || state === 'stopped';
    this.banner.hidden = !showBanner;
    if (showBanner) {
      this.banner.innerHTML = `${icon('error')}<div><strong>${state === 'error' ? 'The agentls server failed to start.' : 'The agentls server stopped.'}</strong>${
        m.server.message ? `<div class="banner-detail">${escapeHtml(m.server.message)}</div>` : ''
      }</div>`;
    }
  }

  private renderUsage(): void {
    const pct = usagePercent(this.model.usage);
    this.usageEl.hidden = pct === null;
    if (pct === null || !this.model.usage) return;
    const { used, size } = this.model.usage;
    const fill = this.usageEl.querySelector('.usage-fill') as HTMLElement;
    fill.style.width = `${pct.toFixed(1)}%`;
    this.usageEl.dataset.level = pct >= 90 ? 'critical' : pct >= 70 ? 'high' : 'normal';
    (this.usageEl.querySelector('.usage-text') as HTMLElement).textContent =
      `Context ${Math.round(pct)}% · ${formatTokens(used)} / ${formatTokens(size)}`;
    this.usageEl.title = `${used.toLocaleString('en-US')} of ${size.toLocaleString('en-US')} tokens in the context window`;
  }

  /** One chip per MCP server: a state dot, the name, the tool count; the last error on hover. */
  private renderMcp(): void {
    const servers = this.model.mcp;
    this.mcpEl.hidden = servers.length === 0;
    this.mcpEl.innerHTML = servers
      .map((s) => {
        const tools = s.state === 'ready' || s.state === 'crashed' ? ` · ${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}` : '';
        const tip = `MCP server ${s.name}: ${s.state}${s.lastError && s.state !== 'ready' ? `\n${s.lastError}` : ''}`;
        return `<span class="mcp-server" data-state="${s.state}" title="${escapeHtml(tip)}"><span class="mcp-dot"></span>${escapeHtml(s.name)}<span class="mcp-detail">${escapeHtml(tools || ' · ' + s.state)}</span></span>`;
      })
      .join('');
  }

  private renderPlan(): void {
    const entries = this.model.plan;
    this.planEl.hidden = entries.length === 0;
    const done = entries.filter((e) => e.status === 'completed').length;
    (this.planEl.querySelector('.plan-count') as HTMLElement).textContent = `${done}/${entries.length}`;
    const list = this.planEl.querySelector('.plan-list') as HTMLElement;
    list.innerHTML = entries
      .map(
        (e) =>
          `<li class="plan-entry" data-status="${escapeHtml(e.status)}"${e.priority ? ` data-priority="${escapeHtml(e.priority)}"` : ''}>` +
          `<span class="plan-icon">${icon(PLAN_ICON[e.status] ?? 'pending')}</span><span class="plan-text">${escapeHtml(e.content)}</span></li>`,
      )
      .join('');
  }

  private renderSessions(): void {
    const sessions = this.model.sessions ?? [];
    if (!sessions.length) {
      this.sessionList.innerHTML = '<li class="session-empty">No sessions yet.</li>';
      return;
    }
    this.sessionList.innerHTML = sessions
      .map((s) => {
        const current = s.sessionId === this.model.sessionId;
        return (
          `<li class="session-item${current ? ' current' : ''}" role="option" tabindex="0" data-session-id="${escapeHtml(s.sessionId)}">` +
          `<span class="session-name">${escapeHtml(s.title || 'Untitled session')}</span>` +
          `<span class="session-meta">${escapeHtml(relativeTime(s.updatedAt))}${s.cwd ? ` · ${escapeHtml(basename(s.cwd))}` : ''}</span></li>` +
          childSessionsOf(s)
            .map((c) => `<li class="session-item child" role="option" tabindex="0" data-session-id="${escapeHtml(c.sessionId)}">` +
              `<span class="session-name">↳ ${escapeHtml(c.title)}</span><span class="session-meta">subagent</span></li>`)
            .join('')
        );
      })
      .join('') +
      (this.model.sessionsCursor ? '<li class="session-more"><button class="ghost-btn" type="button" data-action="moreSessions">Show more</button></li>' : '');
  }

  private renderItems(): void {
    const items = this.model.items;
    this.emptyEl.hidden = items.length > 0;
    const last = items[items.length - 1];
    // Hidden while an answer streams (it has its own cursor) or a card asks for permission.
    this.workingEl.hidden = !this.model.running || last?.kind === 'agent' || this.model.pendingPermissions.length > 0;
    const lastAgent = this.model.running ? items[items.length - 1] : undefined;
    for (const item of items) {
      const seen = this.rendered.get(item.id);
      const streaming = item === lastAgent && item.kind === 'agent';
      if (seen && seen.rev === item.rev && seen.node.classList.contains('streaming') === streaming) continue;
      const node = this.renderItem(item, seen?.node);
      node.classList.toggle('streaming', streaming);
      const box = !seen && item.kind === 'tool' ? this.childBox(item.parentToolCallId) : null;
      if (box) box.appendChild(node);  // a subagent's call, nested under its delegate card
      else if (!seen) this.transcript.insertBefore(node, this.workingEl);
      else if (seen.node !== node) seen.node.replaceWith(node);
      this.rendered.set(item.id, { rev: item.rev, node });
    }
    if (this.rendered.size > items.length) {  // items left the transcript (a retried stream's void message)
      const kept = new Set(items.map((i) => i.id));
      for (const [id, seen] of this.rendered) {
        if (!kept.has(id)) {
          seen.node.remove();
          this.rendered.delete(id);
        }
      }
    }
  }

  /** The container of a delegate_task card's subagent calls (made on first use); null when the card is not shown. */
  private childBox(parentToolCallId: string | null): HTMLElement | null {
    if (!parentToolCallId) return null;
    let box = this.childBoxes.get(parentToolCallId);
    if (box) return box;
    const parent = this.model.toolItem(parentToolCallId);
    const card = parent ? this.rendered.get(parent.id)?.node : undefined;
    if (!card) return null;
    box = el('div');
    box.className = 'subagent-calls';
    this.childBoxes.set(parentToolCallId, box);
    card.appendChild(box);
    card.classList.remove('no-body');
    if (!card.dataset.toggled) (card as HTMLDetailsElement).open = true;
    return box;
  }

  private renderItem(item: Item, prev: HTMLElement | undefined): HTMLElement {
    // Cards whose state the user controls (open/closed) are updated in place.
    const reuse = item.kind === 'agent' || item.kind === 'tool';
    const n = reuse && prev ? prev : el(item.kind === 'thought' || item.kind === 'tool' ? 'details' : 'div');
    n.dataset.itemId = item.id;
    switch (item.kind) {
      case 'user':
        n.className = 'msg user';
        n.innerHTML = userHtml(item);
        break;
      case 'agent':
        n.className = 'msg agent';
        n.innerHTML = `<div class="md">${renderMarkdown(item.text)}</div>`;
        break;
      case 'thought':
        n.className = 'thought';
        (n as HTMLDetailsElement).open = prev ? (prev as HTMLDetailsElement).open : false;
        n.innerHTML = thoughtHtml(item);
        break;
      case 'tool': {
        const d = n as HTMLDetailsElement;
        d.className = `tool kind-${item.toolKind}`;
        d.dataset.toolCallId = item.toolCallId;
        d.dataset.status = item.status;
        d.dataset.kind = item.toolKind;
        // Open edits and failures by default, unless the user has toggled the card.
        if (!d.dataset.toggled) d.open = item.content.some((c) => c.type === 'diff') || item.status === 'failed';
        const { html, hasBody } = toolHtml(item, this.model.terminals);
        d.innerHTML = html;
        const box = this.childBoxes.get(item.toolCallId);
        if (box) {  // its subagents' calls survive the card's own update
          d.appendChild(box);
          if (!d.dataset.toggled && item.status === 'in_progress') d.open = true;
        }
        d.classList.toggle('no-body', !hasBody && !box);
        d.classList.toggle('subagent', !!item.parentToolCallId);
        break;
      }
      case 'permission':
        n.className = `permission${item.resolved ? ' resolved' : ''}`;
        n.dataset.requestId = item.requestId;
        n.innerHTML = permissionHtml(item);
        break;
      case 'compaction':
        n.className = 'compaction';
        n.dataset.status = item.status;
        n.innerHTML = compactionHtml(item, (prev?.querySelector('details') as HTMLDetailsElement | null)?.open ?? false);
        break;
      case 'notice':
        n.className = `notice level-${item.level}`;
        n.setAttribute('role', item.level === 'error' ? 'alert' : 'status');
        n.innerHTML = noticeHtml(item);
        break;
    }
    return n;
  }

  private renderTerminal(terminalId: string): void {
    const t = this.model.terminals.get(terminalId);
    for (const node of this.transcript.querySelectorAll<HTMLElement>('.terminal')) {
      if (node.dataset.terminalId !== terminalId) continue;
      const pre = node.querySelector('.term-output') as HTMLElement;
      const follow = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 20;
      pre.textContent = clip(t?.output ?? '');
      if (follow) pre.scrollTop = pre.scrollHeight;
      (node.querySelector('.term-exit') as HTMLElement).innerHTML = exitLabel(t);
    }
  }

  private renderComposer(): void {
    const running = this.model.running;
    const hasText = this.input.value.trim().length > 0;
    this.sendBtn.disabled = !hasText;
    this.sendBtn.innerHTML = running ? `${icon('steer')}<span>Steer</span>` : `${icon('send')}<span>Send</span>`;
    this.sendBtn.title = running ? 'Send guidance to the running turn (Enter)' : 'Send (Enter)';
    this.sendBtn.dataset.mode = running ? 'steer' : 'send';
    this.stopBtn.disabled = !running;
    this.undoBtn.disabled = running || !this.model.sessionId;
    this.compactBtn.disabled = !this.model.sessionId;
    this.runningEl.hidden = !running;
    this.input.placeholder = running
      ? 'Steer the running turn… (Esc to stop)'
      : this.model.replaying
        ? 'Loading session…'
        : 'Ask agentls… (Enter to send, Shift+Enter for a new line)';
    this.root.querySelector('.app')?.classList.toggle('is-running', running);
  }

  // ---- events ----------------------------------------------------------------

  private persist(draft: string): void {
    this.options.setState?.({ draft, includeContext: this.includeContext });
  }

  private renderContextToggle(): void {
    const on = this.includeContext;
    this.contextBtn.setAttribute('aria-pressed', String(on));
    this.contextBtn.classList.toggle('on', on);
    const label = this.contextLabel ?? 'No active file';
    (this.contextBtn.querySelector('.context-label') as HTMLElement).textContent = label;
    this.contextBtn.title = on
      ? `Sending the active file and selection with each prompt (${label}). Click to stop.`
      : 'Send the active file and selection with each prompt';
  }

  private send(): void {
    const text = this.input.value.trim();
    if (!text) return;
    const mentions = this.mentions.take();
    if (this.model.running) this.post({ type: 'steer', text });
    else {
      const msg: ToExtension = { type: 'prompt', text };
      if (this.includeContext) msg.context = true;
      if (mentions.length) msg.mentions = mentions;
      this.post(msg);
    }
    this.input.value = '';
    this.persist('');
    this.autoGrow();
    this.forceScroll = true;
    this.renderComposer();
  }

  private autoGrow(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 220)}px`;
  }

  private toggleSessions(open?: boolean): void {
    const show = open ?? this.sessionsPanel.hidden;
    this.sessionsPanel.hidden = !show;
    if (show) {
      this.post({ type: 'listSessions' });
      this.sessionSearch.value = '';
      this.sessionSearch.focus();
    }
  }

  private toggleCompact(open?: boolean): void {
    const show = open ?? this.compactRow.hidden;
    this.compactRow.hidden = !show;
    if (show) this.compactInput.focus();
    else this.input.focus();
  }

  private bindEvents(): void {
    this.input.addEventListener('input', () => {
      this.autoGrow();
      this.renderComposer();
      this.persist(this.input.value);
    });
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && !e.altKey) {
        e.preventDefault();
        this.send();
      }
    });
    this.compactInput.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.confirmCompact();
      }
    });
    this.sessionSearch.addEventListener('input', () => {
      clearTimeout(this.searchTimer);
      this.searchTimer = setTimeout(() => {
        const query = this.sessionSearch.value.trim();
        this.post(query ? { type: 'listSessions', query } : { type: 'listSessions' });
      }, 200);
    });
    document.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape') return;
      if (!this.sessionsPanel.hidden) {
        this.sessionsPanel.hidden = true;
        this.input.focus();
      } else if (!this.compactRow.hidden) {
        this.toggleCompact(false);
      } else if (this.model.running) {
        e.preventDefault();
        this.post({ type: 'stop' });
      }
    });
    this.root.addEventListener('click', (e) => this.onClick(e));
    this.sessionList.addEventListener('keydown', (e) => {
      const item = (e.target as HTMLElement).closest<HTMLElement>('.session-item');
      if (item && (e.key === 'Enter' || e.key === ' ')) {
        e.preventDefault();
        this.loadSession(item.dataset.sessionId!);
      }
    });
    // Remember that the user toggled a tool card, so updates keep their choice.
    this.transcript.addEventListener('click', (e) => {
      const summary = (e.target as HTMLElement).closest('details.tool > summary');
      if (summary && !(e.target as HTMLElement).closest('a')) (summary.parentElement as HTMLElement).dataset.toggled = '1';
    });
  }

  private loadSession(sessionId: string): void {
    this.sessionsPanel.hidden = true;
    this.post({ type: 'loadSession', sessionId });
  }

  private confirmCompact(): void {
    const focus = this.compactInput.value.trim();
    this.post(focus ? { type: 'compact', focus } : { type: 'compact' });
    this.compactInput.value = '';
    this.toggleCompact(false);
  }

  private onClick(e: MouseEvent): void {
    const target = e.target as HTMLElement;
    const option = target.closest<HTMLButtonElement>('.permission button[data-option-id]');
    if (option) {
      const card = option.closest<HTMLElement>('.permission')!;
      if (option.disabled) return;
      card.querySelectorAll('button').forEach((b) => (b.disabled = true));
      this.post({ type: 'permission', requestId: card.dataset.requestId!, optionId: option.dataset.optionId! });
      return;
    }
    const link = target.closest<HTMLAnchorElement>('a.file-link');
    if (link) {
      e.preventDefault();
      e.stopPropagation();
      const line = link.dataset.line ? Number(link.dataset.line) : null;
      this.post({ type: 'openLocation', path: link.dataset.path!, line });
      return;
    }
    const term = target.closest<HTMLAnchorElement>('a.term-open');
    if (term) {
      e.preventDefault();
      this.post({ type: 'openTerminal', terminalId: term.dataset.terminal! });
      return;
    }
    const copy = target.closest<HTMLButtonElement>('button[data-copy]');
    if (copy) {
      const code = copy.closest('.code-block')?.querySelector('code')?.textContent ?? '';
      void navigator.clipboard?.writeText(code).then(
        () => {
          copy.textContent = 'Copied';
          setTimeout(() => (copy.textContent = 'Copy'), 1200);
        },
        () => undefined,
      );
      return;
    }
    const session = target.closest<HTMLElement>('.session-item');
    if (session) {
      this.loadSession(session.dataset.sessionId!);
      return;
    }
    const action = target.closest<HTMLElement>('[data-action]')?.dataset.action;
    switch (action) {
      case 'send':
        this.send();
        break;
      case 'stop':
        this.post({ type: 'stop' });
        break;
      case 'compact':
        this.toggleCompact();
        break;
      case 'compactConfirm':
        this.confirmCompact();
        break;
      case 'compactCancel':
        this.toggleCompact(false);
        break;
      case 'undo':
        this.post({ type: 'undo' });
        break;
      case 'toggleContext':
        this.includeContext = !this.includeContext;
        this.renderContextToggle();
        this.persist(this.input.value);
        break;
      case 'newSession':
        this.sessionsPanel.hidden = true;
        this.post({ type: 'newSession' });
        this.input.focus();
        break;
      case 'history':
        this.toggleSessions();
        break;
      case 'closeSessions':
        this.toggleSessions(false);
        break;
      case 'moreSessions': {
        const query = this.sessionSearch.value.trim();
        const cursor = this.model.sessionsCursor ?? undefined;
        this.post({ type: 'listSessions', ...(query ? { query } : {}), ...(cursor ? { cursor } : {}) });
        break;
      }
    }
  }
}
