import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: "ui",
    environment: "jsdom",
    include: ["tests/**/*.test.ts"],
    environmentOptions: { jsdom: { pretendToBeVisual: true } },
  },
});
