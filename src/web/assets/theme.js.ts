/**
 * Light or dark. THEME_HEAD_JS is served alone as /assets/theme.js and loaded blocking in the
 * head (the pages allow no inline script): it puts a stored choice on <html data-theme> before
 * the first paint, so a chosen theme never flashes the other one. Without a choice the
 * stylesheet follows the system's colour scheme. THEME_JS, in the bundle, runs the header's toggle.
 */
export const THEME_KEY = "notestream-theme";

export const THEME_HEAD_JS = `(function(){try{var t=localStorage.getItem("${THEME_KEY}");if(t==="dark"||t==="light")document.documentElement.setAttribute("data-theme",t);}catch(e){}})();
`;

export const THEME_JS = `  // The header's light/dark toggle: the choice is kept in this browser (localStorage) and followed by its other tabs.
  (function(){var themeButton=document.querySelector("[data-theme-toggle]");
  if(themeButton){var rootEl=document.documentElement,systemDark=window.matchMedia?window.matchMedia("(prefers-color-scheme: dark)"):null;
    function themeNow(){var t=rootEl.getAttribute("data-theme");return t==="dark"||t==="light"?t:systemDark&&systemDark.matches?"dark":"light";}
    function showTheme(){themeButton.setAttribute("aria-pressed",themeNow()==="dark"?"true":"false");}
    themeButton.hidden=false;showTheme();
    themeButton.addEventListener("click",function(){var next=themeNow()==="dark"?"light":"dark";rootEl.setAttribute("data-theme",next);try{localStorage.setItem("${THEME_KEY}",next);}catch(e){}showTheme();});
    window.addEventListener("storage",function(e){if(e.key!=="${THEME_KEY}")return;if(e.newValue==="dark"||e.newValue==="light")rootEl.setAttribute("data-theme",e.newValue);else rootEl.removeAttribute("data-theme");showTheme();});
    if(systemDark&&systemDark.addEventListener)systemDark.addEventListener("change",showTheme);}})();
`;
