import { mount } from 'svelte';
import './app.css';
import { isLumen } from './lib/lumen';
import { takeKeyFromAddress } from './lib/key';

// Before anything calls vyred: a key the Mac app handed over in the address.
takeKeyFromAddress();

// Lumen (the Mac app's capsule, at /app/lumen) loads its own small view; everything else the app.
const view = isLumen(location.pathname) ? import('./Lumen.svelte') : import('./App.svelte');
view.then(({ default: root }) => mount(root, { target: document.getElementById('app')! }));
