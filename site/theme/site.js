// The static edition's page behaviour, no framework: the colour scheme with its toggle (remembered in
// localStorage), the contents menu on narrow screens, and a copy button on every block of code. It is loaded in
// <head>, so that a remembered scheme applies before the page first paints; the rest waits for the page.
(() => {
  const root = document.documentElement;
  const themeKey = "agentrl-site-theme";
  const systemDark = matchMedia("(prefers-color-scheme: dark)");
  root.classList.add("js");

  function stored() {
    try {
      return localStorage.getItem(themeKey);
    } catch {
      return null; // storage refused (a privacy setting): the system's scheme it is
    }
  }
  const saved = stored();
  if (saved === "light" || saved === "dark") root.dataset.theme = saved;

  const isDark = () => (root.dataset.theme ? root.dataset.theme === "dark" : systemDark.matches);

  // The toggle switches to the other scheme. A choice that differs from the system's is remembered; one that
  // agrees with it is forgotten, so that the page follows the system again.
  function themeToggle(button) {
    const show = () => button.setAttribute("aria-pressed", String(isDark()));
    button.addEventListener("click", () => {
      const next = isDark() ? "light" : "dark";
      try {
        if ((next === "dark") === systemDark.matches) localStorage.removeItem(themeKey);
        else localStorage.setItem(themeKey, next);
      } catch {}
      if ((next === "dark") === systemDark.matches) delete root.dataset.theme;
      else root.dataset.theme = next;
      show();
    });
    systemDark.addEventListener("change", show);
    show();
  }

  // The menu button shows and hides the contents, which narrow screens keep folded.
  function menu(button, toc) {
    const open = (yes) => {
      document.body.classList.toggle("menu-open", yes);
      button.setAttribute("aria-expanded", String(yes));
    };
    button.addEventListener("click", () => open(!document.body.classList.contains("menu-open")));
    toc.addEventListener("click", (e) => {
      if (e.target.closest("a")) open(false);
    });
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape") open(false);
    });
  }

  // copyText puts text on the clipboard, through the Clipboard API where the page may use it, else through a
  // selection and the copy command.
  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.append(area);
      area.select();
      const ok = document.execCommand("copy");
      area.remove();
      return ok;
    }
  }

  // copyButton wraps a block of code with a button that copies its text (the code as written: highlighting
  // changes no character).
  function copyButton(pre) {
    const code = pre.querySelector("code") || pre;
    if (!code.textContent) return;
    const wrap = document.createElement("div");
    wrap.className = "code-wrap";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy the code");
    button.addEventListener("click", async () => {
      const ok = await copyText(code.textContent);
      button.textContent = ok ? "Copied" : "Copy failed";
      setTimeout(() => (button.textContent = "Copy"), 2000);
    });
    pre.replaceWith(wrap);
    wrap.append(pre, button);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const toggle = document.querySelector(".theme-toggle");
    if (toggle) themeToggle(toggle);
    const button = document.querySelector(".menu-button");
    const toc = document.getElementById("toc");
    if (button && toc) menu(button, toc);
    document.querySelectorAll("pre.code").forEach(copyButton);
  });
})();
