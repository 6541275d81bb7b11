/** The note editors: autosave of plain and rich notes. */
export const EDITOR_JS = `  // Autosave of plain editable notes.
  var ed=document.querySelector("[data-autosave]");
  if(ed){var status=document.getElementById("save-status"),timer=null,last=ed.value,title=document.getElementById("title");
    function save(){var body={plain_body:ed.value,title:title?title.value:undefined};status.textContent="Saving…";
      post(ed.dataset.autosave,body).then(function(r){return r.json().then(function(j){status.textContent=r.ok?"Saved "+new Date().toLocaleTimeString():(j.error&&j.error.message)||"Not saved";});}).catch(function(){status.textContent="Offline: not saved";});}
    function later(){clearTimeout(timer);timer=setTimeout(save,1200);status.textContent="Unsaved changes";}
    ed.addEventListener("input",later);if(title)title.addEventListener("input",later);}
  // Rich-text notes: a contenteditable with a small toolbar; saved as HTML, sanitised on the server.
  var rich=document.querySelector("[data-rich]");
  if(rich){var rs=document.getElementById("save-status"),rt=null,rtitle=document.getElementById("title");
    document.querySelectorAll("[data-cmd]").forEach(function(b){b.addEventListener("click",function(e){e.preventDefault();document.execCommand(b.dataset.cmd,false,b.dataset.arg||null);rich.focus();later2();});});
    function save2(){rs.textContent="Saving…";post(rich.dataset.rich,{html:rich.innerHTML,title:rtitle?rtitle.value:undefined}).then(function(r){return r.json().then(function(j){rs.textContent=r.ok?"Saved "+new Date().toLocaleTimeString():(j.error&&j.error.message)||"Not saved";});});}
    function later2(){clearTimeout(rt);rt=setTimeout(save2,1200);rs.textContent="Unsaved changes";}
    rich.addEventListener("input",later2);if(rtitle)rtitle.addEventListener("input",later2);}
`;
