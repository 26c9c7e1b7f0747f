// Renders media/icon.svg to media/icon.png (128×128) with the system Chromium.
// Run: npx tsx scripts/make-icon.ts
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../test/webview/harness';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '..');
  const svg = fs.readFileSync(path.join(root, 'media', 'icon.svg'), 'utf8');
  const browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.screenshot({ path: path.join(root, 'media', 'icon.png'), omitBackground: true });
  await browser.close();
}

void main();
