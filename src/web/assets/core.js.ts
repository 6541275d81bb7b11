/** Shared by every page: the CSRF header for the page's own requests, forms that ask first, copy buttons. Runs inside the bundle's function: later pieces use `csrf` and `post`. */
export const CORE_JS = `
  var csrf = document.querySelector('meta[name="csrf"]');
  csrf = csrf ? csrf.content : "";
  function post(url, body){return fetch(url,{method:"POST",headers:{"content-type":"application/json","x-csrf-token":csrf},body:JSON.stringify(body),credentials:"same-origin"});}
  // Forms that ask first (no inline handlers: the pages' policy allows only this script).
  document.querySelectorAll("form[data-confirm]").forEach(function(f){f.addEventListener("submit",function(e){if(!confirm(f.dataset.confirm))e.preventDefault();});});
  // Copy buttons.
  document.querySelectorAll("[data-copy]").forEach(function(b){b.addEventListener("click",function(){var t=document.getElementById(b.dataset.copy);navigator.clipboard&&navigator.clipboard.writeText(t.value);t.select();b.textContent="Copied";});});
`;
