import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { build, defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// Dev only: `VYRE_DEV_URL=http://127.0.0.1:<port> VYRE_DEV_TOKEN=<device token> npm run dev`
// proxies the API to a running vyred and adds a program device's bearer token. The built app
// holds no token: vyred serves it, the browser's cookie and the page's key do the rest.
const target = process.env.VYRE_DEV_URL;
const token = process.env.VYRE_DEV_TOKEN;

// Dev against a vyred without the browser session routes: answer /v1/session as a device.
const devSession = {
  name: 'vyre-dev-session',
  configureServer(server: any) {
    if (!token) return;
    server.middlewares.use('/v1/session', (req: any, res: any, next: any) => {
      if (req.method !== 'GET' || (req.url && req.url !== '/' && req.url !== '')) return next();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { kind: 'device', device: { id: 'dev', name: 'dev' }, owner: { name: 'dev' }, onboarded: true } }));
    });
  },
};

/** Every file under `dir`, as paths relative to it with `/`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split('\\').join('/'));
}

// The service worker (src/sw.ts; what it does is in src/lib/offline.ts): once the app is built,
// dist/sw.js is built beside it, a plain script with the build written in: its id (a hash of
// every file the build wrote, so the same build makes the same worker and the browser sees a new
// one exactly when the build changed) and its files, the shell (`/app/`) first. Not for the
// fixture page nor the tests' SSR build.
function serviceWorker(): Plugin {
  let root = '';
  let outDir = '';
  let base = '/';
  let skip = true;
  let written = false;
  return {
    name: 'vyre-service-worker',
    apply: 'build',
    configResolved(config) {
      root = config.root;
      outDir = resolve(config.root, config.build.outDir);
      base = config.base;
      skip = Boolean(config.build.ssr) || config.mode === 'fixtures';
    },
    writeBundle() {
      written = true;
    },
    async closeBundle() {
      if (skip || !written) return;
      const files = filesUnder(outDir)
        .filter((f) => f !== 'sw.js')
        .sort((a, b) => Number(b === 'index.html') - Number(a === 'index.html') || a.localeCompare(b));
      const hash = createHash('sha256');
      for (const f of files) hash.update(`${f}\0`).update(readFileSync(join(outDir, f))).update('\0');
      const id = hash.digest('hex').slice(0, 16);
      const precache = files.map((f) => (f === 'index.html' ? base : base + f));
      await build({
        configFile: false,
        root,
        base,
        publicDir: false,
        logLevel: 'warn',
        define: { __VYRE_BUILD__: JSON.stringify(id), __VYRE_PRECACHE__: JSON.stringify(precache) },
        build: {
          outDir,
          emptyOutDir: false,
          copyPublicDir: false,
          target: 'es2022',
          minify: false,
          lib: { entry: resolve(root, 'src/sw.ts'), formats: ['iife'], name: 'vyreWorker', fileName: () => 'sw.js' },
          rollupOptions: { output: { banner: '// Vyre\'s service worker, built from ui/src/sw.ts (edit that; Web Push goes there too).' } },
        },
      });
    },
  };
}

// `vite build --mode fixtures` (npm run build:fixtures) builds the fixture page instead: every
// case of the chat's Markdown, Code and Diff, for the browser tests and screenshots; it goes to
// dist-fixtures/, never into the app that vyred serves.
export default defineConfig(({ mode }) => ({
  base: mode === 'fixtures' ? '/' : '/app/',
  plugins: [svelte(), devSession, serviceWorker()],
  build: {
    outDir: mode === 'fixtures' ? 'dist-fixtures' : 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    rollupOptions: mode === 'fixtures' ? { input: 'fixtures/index.html' } : undefined,
  },
  server: target
    ? {
        proxy: {
          '/v1': {
            target,
            changeOrigin: true,
            configure: (proxy: any) => {
              proxy.on('proxyReq', (req: any) => {
                req.removeHeader('origin');
                if (token) req.setHeader('Authorization', `Bearer ${token}`);
              });
            },
          },
        },
      }
    : undefined,
}));
