import { defineConfig } from "vite";

// The webview loads everything from the app bundle: no CDN, no remote fonts (the CSP forbids them).
export default defineConfig({
  root: "ui",
  base: "./",
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  preview: { port: 4173 },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "safari15",
    sourcemap: false,
    reportCompressedSize: false,
  },
});
