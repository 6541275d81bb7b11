/**
 * The notes list's status board (src/modules/web/board.ts): while the page is visible, the rows
 * of the view and the notice of channels turned off are fetched every ten seconds as JSON (and at
 * once when the page comes back into view); a row is replaced only when its signature changed, the filters' counts are updated, and
 * notes that joined or left the view are announced with a link to refresh rather than shuffled
 * under the reader's pointer. Hidden pages ask nothing. Relative times tick through times.js's
 * showTimes().
 */
export const BOARD_JS = `  // Status board: poll the view's rows while the page is visible.
  (function(){var card=document.querySelector("[data-board]");if(!card||!window.fetch)return;
    var src=card.getAttribute("data-board"),every=10000,timer=null,busy=false,stopped=false,changed=card.querySelector("[data-board-changed]");
    function rows(){var m={};card.querySelectorAll("[data-board-row]").forEach(function(li){m[li.getAttribute("data-board-row")]=li;});return m;}
    function apply(d){var have=rows(),seen=0,moved=false;
      d.rows.forEach(function(r){var li=have[r.id];if(!li){moved=true;return;}seen++;
        if(li.getAttribute("data-sig")!==r.sig){var t=document.createElement("template");t.innerHTML=r.html;var fresh=t.content.firstElementChild;if(fresh)li.replaceWith(fresh);}});
      if(seen!==Object.keys(have).length)moved=true;
      if(changed&&moved)changed.hidden=false;
      Object.keys(d.counts).forEach(function(k){var c=document.querySelector('[data-board-count="'+k+'"]');if(c){c.textContent=String(d.counts[k]);if(k==="attention")c.classList.toggle("alert",d.counts[k]>0);}});
      var n=document.querySelector("[data-board-notice]");if(n&&typeof d.notice==="string"&&n.innerHTML!==d.notice)n.innerHTML=d.notice;
      if(typeof showTimes==="function")showTimes();}
    function poll(){timer=null;if(stopped||busy||document.visibilityState!=="visible")return;busy=true;
      fetch(src,{credentials:"same-origin",headers:{accept:"application/json"}}).then(function(r){
        // Signed out (or the page's view gone): stop asking; a reload shows why.
        if(r.status===401||r.status===403||r.status===404){stopped=true;return null;}return r.ok?r.json():null;})
        .then(function(d){if(d)apply(d);}).catch(function(){}).then(function(){busy=false;schedule();});}
    function schedule(){if(!stopped&&!timer&&document.visibilityState==="visible")timer=setTimeout(poll,every);}
    document.addEventListener("visibilitychange",function(){if(document.visibilityState==="visible"){if(timer){clearTimeout(timer);timer=null;}poll();}else if(timer){clearTimeout(timer);timer=null;}});
    schedule();})();
`;
