/** Inline 16×16 stroke icons (currentColor), so the webview needs no icon font. */

const PATHS = {
  plus: '<path d="M8 3v10M3 8h10"/>',
  history: '<path d="M2.6 8a5.4 5.4 0 1 0 1.6-3.8"/><path d="M2.5 2.3v2.8h2.8"/><path d="M8 5.2v3l2.1 1.4"/>',
  stop: '<rect x="4" y="4" width="8" height="8" rx="1.6" fill="currentColor" stroke="none"/>',
  send: '<path d="M8 13V3.5M3.8 7.5 8 3.3l4.2 4.2"/>',
  steer: '<path d="M3 8h8.5M8.5 4.5 12 8l-3.5 3.5"/><path d="M3 4v8" opacity=".55"/>',
  compact: '<path d="M6 2.5v3.5H2.5M10 2.5v3.5h3.5M6 13.5V10H2.5M10 13.5V10h3.5"/>',
  undo: '<path d="M5.5 3.5 2.5 6.5l3 3"/><path d="M2.5 6.5h7a3.5 3.5 0 0 1 0 7H7"/>',
  close: '<path d="M4 4l8 8M12 4l-8 8"/>',
  chevron: '<path d="M6 3.8 10.2 8 6 12.2"/>',
  read: '<path d="M4 1.8h4.8L12 5v9.2H4z"/><path d="M8.6 1.8V5.2H12"/>',
  edit: '<path d="M10.6 2.4l3 3-8.1 8.1H2.5v-3z"/><path d="M9 4l3 3"/>',
  delete: '<path d="M2.8 4.3h10.4M6.3 4.3V2.7h3.4v1.6M4.3 4.3l.6 9.2h6.2l.6-9.2"/>',
  move: '<path d="M2 8h11M9.5 4.5 13 8l-3.5 3.5"/>',
  search: '<circle cx="7" cy="7" r="4.3"/><path d="M10.3 10.3 13.8 13.8"/>',
  execute: '<path d="M3 4.5 6.5 8 3 11.5M8.3 12h5"/>',
  think: '<path d="M5.8 11.5h4.4M6.4 13.8h3.2"/><path d="M8 2.2a4 4 0 0 0-2.4 7.2c.3.3.5.7.5 1.1v1h3.8v-1c0-.4.2-.8.5-1.1A4 4 0 0 0 8 2.2z"/>',
  fetch: '<circle cx="8" cy="8" r="5.8"/><path d="M2.2 8h11.6M8 2.2c2.1 2.2 2.1 9.4 0 11.6M8 2.2c-2.1 2.2-2.1 9.4 0 11.6"/>',
  switch_mode: '<rect x="2" y="5" width="12" height="6" rx="3"/><circle cx="11" cy="8" r="1.6" fill="currentColor"/>',
  other: '<circle cx="8" cy="8" r="5.6"/><circle cx="8" cy="8" r="1.6" fill="currentColor" stroke="none"/>',
  check: '<path d="M3.2 8.6 6.5 11.8 12.8 4.6"/>',
  cross: '<path d="M4.5 4.5l7 7M11.5 4.5l-7 7"/>',
  pending: '<circle cx="8" cy="8" r="5" stroke-dasharray="2.4 2.2"/>',
  spinner: '<path d="M8 2.5a5.5 5.5 0 1 1-5.5 5.5"/>',
  shield: '<path d="M8 1.6 13.2 3.6v3.9c0 3.3-2.3 5.8-5.2 6.9-2.9-1.1-5.2-3.6-5.2-6.9V3.6z"/><path d="M5.8 8.2 7.4 9.8 10.4 6.6"/>',
  info: '<circle cx="8" cy="8" r="6.2"/><path d="M8 7.3v4M8 4.9v.1"/>',
  warning: '<path d="M8 2.2 14.3 13.4H1.7z"/><path d="M8 6.6v3.5M8 11.9v.1"/>',
  error: '<circle cx="8" cy="8" r="6.2"/><path d="M5.7 5.7l4.6 4.6M10.3 5.7l-4.6 4.6"/>',
  terminal: '<rect x="1.8" y="2.8" width="12.4" height="10.4" rx="1.5"/><path d="M4.5 6.3 6.5 8l-2 1.7M8 10h3.5"/>',
  copy: '<rect x="5.3" y="5.3" width="8.2" height="8.2" rx="1.3"/><path d="M10.7 5.3V3.8a1.3 1.3 0 0 0-1.3-1.3H3.8a1.3 1.3 0 0 0-1.3 1.3v5.6a1.3 1.3 0 0 0 1.3 1.3h1.5"/>',
  compacted: '<path d="M2.5 5.5h11M2.5 10.5h11"/><path d="M6 2.5 8 4.5l2-2M6 13.5l2-2 2 2"/>',
  logo: '<rect x="1.6" y="1.6" width="12.8" height="12.8" rx="3.4"/><path d="M4.6 6 6.9 8.2 4.6 10.4M8.4 10.6h3"/>',
} as const;

export type IconName = keyof typeof PATHS;

export function icon(name: IconName, cls = ''): string {
  return (
    `<svg class="icon icon-${name}${cls ? ' ' + cls : ''}" viewBox="0 0 16 16" width="16" height="16" ` +
    `fill="none" stroke="currentColor" stroke-width="1.4" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">` +
    `${PATHS[name]}</svg>`
  );
}

export function kindIcon(kind: string): string {
  return icon((kind in PATHS ? kind : 'other') as IconName);
}
