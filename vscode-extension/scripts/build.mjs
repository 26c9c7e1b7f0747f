// Bundles the extension (Node, CommonJS, `vscode` external) and the chat
// webview (browser IIFE) with esbuild. Usage: node scripts/build.mjs [--minify] [--watch]
import * as esbuild from 'esbuild';

const minify = process.argv.includes('--minify');
const watch = process.argv.includes('--watch');

const common = { bundle: true, minify, sourcemap: !minify, logLevel: 'info', target: 'es2022' };

const builds = [
  {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: ['src/webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
  },
];

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
