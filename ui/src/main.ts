import { mount } from 'svelte';
import './app.css';
import { isLumen } from './lib/lumen';
import { takeKeyFromAddress } from './lib/key';
import { askEarly } from './lib/early';
import { registerWorker } from './lib/worker';

// Before anything calls vyred: a key the Mac app handed over in the address.
takeKeyFromAddress();
// While the app's code loads: the session, the stream's start and a thread's first page.
if (!isLumen(location.pathname)) askEarly(location);

// Lumen (the Mac app's capsule, at /app/lumen) loads its own small view; everything else the app.
const view = isLumen(location.pathname) ? import('./Lumen.svelte') : import('./App.svelte');
view.then(({ default: root }) => mount(root, { target: document.getElementById('app')! }));

// Offline: this build's shell, kept by a service worker (phones, in a secure context only).
registerWorker(isLumen(location.pathname));
