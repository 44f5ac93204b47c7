import { defineConfig } from 'vite';
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

// `vite build --mode fixtures` (npm run build:fixtures) builds the fixture page instead: every
// case of the chat's Markdown, Code and Diff, for the browser tests and screenshots; it goes to
// dist-fixtures/, never into the app that vyred serves.
export default defineConfig(({ mode }) => ({
  base: mode === 'fixtures' ? '/' : '/app/',
  plugins: [svelte(), devSession],
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
