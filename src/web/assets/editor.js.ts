/**
 * The note editors (plain and rich; note-views.ts renders them). Never lose what was typed:
 * - autosave 1.2 s after the last keystroke, and at once on blur, when the page is hidden or
 *   left (pagehide, beforeunload), with `keepalive` so the save outlives the page;
 * - the browser asks before leaving only when the text could not be handed off that way (the
 *   last save failed, or the text is past the 64 KiB a closing page may still send);
 * - a draft in localStorage until the server confirms the save, offered back on the next visit;
 * - a failed save says why and what to do: offline, session ended (sign in in a new tab, Retry,
 *   with the new session's CSRF token fetched from GET …/save), or the server's own message.
 * String.raw: the script's backslashes reach the browser as written.
 */
export const EDITOR_JS = String.raw`  // The note editors: autosave, save on leaving, a local draft, and a way forward when a save fails.
  var noteEd=document.querySelector("[data-autosave]");
  if(noteEd)(function(ed){
    var rich=ed.hasAttribute("contenteditable"),title=document.getElementById("title"),
      statusEl=document.getElementById("save-status"),problemBox=document.getElementById("save-problem"),problemText=document.getElementById("save-problem-text"),
      signIn=document.getElementById("save-signin"),retryBtn=document.getElementById("save-retry"),
      draftBar=document.getElementById("draft-bar"),draftText=document.getElementById("draft-text"),
      url=ed.dataset.autosave,draftKey="notestream:draft:"+ed.dataset.note,savedAt=Number(ed.dataset.savedAt)||0,
      // Browsers let a page that is going away send at most 64 KiB (keepalive fetches, beacons).
      LEAVING_MAX=60000;
    function payload(){var f={};if(title)f.title=title.value;f[rich?"html":"plain_body"]=rich?ed.innerHTML:ed.value;return JSON.stringify(f);}
    // confirmed: what the server holds. sending: the text of the newest save in flight; handedOff: sent with keepalive.
    var confirmed=payload(),sending=null,handedOff=false,sends=0,again=false,problem=null,timer=null,draftTimer=null,busyTimer=null;
    function say(t){if(statusEl)statusEl.textContent=t;}
    function showProblem(kind,message){problem=kind;if(!problemBox){say(message);return;}problemText.textContent=message;signIn.hidden=kind!=="session";problemBox.hidden=false;say("Not saved");}
    function clearProblem(){problem=null;if(problemBox)problemBox.hidden=true;}

    // The draft: this browser's copy of text the server has not confirmed.
    function readDraft(){try{var d=JSON.parse(localStorage.getItem(draftKey)||"null");return d&&typeof d.payload==="string"?d:null;}catch(e){return null;}}
    function dropDraft(){try{localStorage.removeItem(draftKey);}catch(e){}}
    function keepDraft(){clearTimeout(draftTimer);draftTimer=null;var p=payload();if(p===confirmed){dropDraft();return;}
      try{localStorage.setItem(draftKey,JSON.stringify({payload:p,at:Date.now(),base:savedAt}));}catch(e){}}

    function messageOf(j){var e=j&&j.error;if(!e)return "";if(e.details&&e.details.map){var m=e.details.map(function(d){return d&&d.message;}).filter(Boolean).join(" ");if(m)return m;}return e.message||"";}
    // A sign-in in another tab gives the session a new CSRF token: fetch it, and give it to this page's forms too.
    function freshToken(){return fetch(url,{credentials:"same-origin",headers:{accept:"application/json"}}).then(function(r){
        if(r.status===401)return "signed-out";
        if(!r.ok)return "failed";
        return r.json().then(function(j){csrf=j.csrf_token;document.querySelectorAll('input[name="_csrf"]').forEach(function(i){i.value=csrf;});return "ok";});
      },function(){return "offline";});}
    function offline(){keepDraft();showProblem("offline","Offline: not saved. The text is kept in this browser and saves when the connection is back.");}
    function sessionEnded(){var still=problem==="session";showProblem("session",(still?"Still signed out. ":"Your session ended, so this was not saved. ")+"The text stays here and in this browser: sign in in a new tab, then Retry.");}

    function answered(r,p){
      if(r.ok)return r.json().catch(function(){return {};}).then(function(j){confirmed=p;savedAt=Date.parse(j.updated_at)||savedAt;clearProblem();
        if(payload()===p){dropDraft();say("Saved "+new Date().toLocaleTimeString());}else say("Unsaved changes");});
      keepDraft();
      if(r.status===401){sessionEnded();return;}
      var json=(r.headers.get("content-type")||"").indexOf("json")>=0;
      if(r.status===403&&!json){showProblem("expired","This page is out of date, so this was not saved. The text is kept in this browser: reload the page to go on.");return;}
      return (json?r.json():Promise.resolve(null)).catch(function(){return null;}).then(function(j){
        var m=messageOf(j)||"The server refused the save ("+r.status+").";
        if(r.status===429){var wait=Number(r.headers.get("retry-after"))||10;showProblem("busy",m+" It is tried again by itself.");clearTimeout(busyTimer);busyTimer=setTimeout(function(){busyTimer=null;save();},wait*1000);return;}
        showProblem("refused","Not saved: "+m);});}

    function send(p){
      var id=++sends,keep=new Blob([p]).size<=LEAVING_MAX;sending=p;handedOff=keep;say("Saving…");
      function attempt(fresh){return fetch(url,{method:"POST",headers:{"content-type":"application/json","x-csrf-token":csrf},body:p,credentials:"same-origin",keepalive:keep}).then(function(r){
          // A refused form token (not a refusal of the save itself): fetch the session's token and try once more.
          if(r.status===403&&!fresh&&(r.headers.get("content-type")||"").indexOf("json")<0)return freshToken().then(function(t){return t==="ok"?attempt(true):t==="signed-out"?{ok:false,status:401,headers:r.headers}:r;});
          return r;});}
      attempt(false).then(function(r){return answered(r,p);},offline).then(function(){
        if(id===sends){sending=null;handedOff=false;}
        if(again&&!sending){again=false;save();}});}

    function save(leaving){
      clearTimeout(timer);timer=null;
      var p=payload();
      if(p===sending)return;
      if(p===confirmed){if(!sending){clearProblem();dropDraft();}return;}
      if(sending&&!leaving){again=true;return;}
      send(p);}
    function changed(){clearTimeout(draftTimer);draftTimer=setTimeout(keepDraft,300);clearTimeout(timer);
      if(problem!=="busy")timer=setTimeout(save,1200);if(!problem)say("Unsaved changes");}
    function leaving(){if(draftTimer)keepDraft();save(true);}

    ed.addEventListener("input",changed);ed.addEventListener("blur",function(){save();});
    if(title){title.addEventListener("input",changed);title.addEventListener("blur",function(){save();});}
    document.addEventListener("visibilitychange",function(){if(document.visibilityState==="hidden")leaving();});
    window.addEventListener("pagehide",leaving);
    window.addEventListener("beforeunload",function(e){leaving();
      if(payload()!==confirmed&&(problem||!(handedOff&&sending===payload()))){e.preventDefault();e.returnValue="";}});
    window.addEventListener("online",function(){if(problem==="offline")save();});
    if(retryBtn)retryBtn.addEventListener("click",function(){say("Saving…");freshToken().then(function(t){
      if(t==="signed-out")sessionEnded();else if(t==="offline")offline();else{clearProblem();again=false;if(payload()===confirmed)say("Saved");else if(sending)again=true;else send(payload());}});});

    // A draft left by an earlier visit: offered when it differs from the note and is newer than its last save.
    var offered=readDraft();
    if(offered&&(offered.payload===confirmed||!(offered.base===savedAt||offered.at>savedAt))){dropDraft();offered=null;}
    if(offered&&draftBar){var when=new Date(offered.at),shown;try{shown=when.toLocaleString(undefined,{dateStyle:"medium",timeStyle:"short"});}catch(e){shown=when.toLocaleString();}
      draftText.textContent="Unsaved text from "+shown+" was kept in this browser.";draftBar.hidden=false;
      document.getElementById("draft-restore").addEventListener("click",function(){var f={};try{f=JSON.parse(offered.payload);}catch(e){}
        if(title&&typeof f.title==="string")title.value=f.title;
        if(rich)ed.innerHTML=typeof f.html==="string"?f.html:ed.innerHTML;else if(typeof f.plain_body==="string")ed.value=f.plain_body;
        draftBar.hidden=true;offered=null;keepDraft();save();ed.focus();});
      document.getElementById("draft-discard").addEventListener("click",function(){var d=readDraft();if(d&&d.at===offered.at)dropDraft();draftBar.hidden=true;offered=null;ed.focus();});}

    if(!rich)return;
    // The rich toolbar. The selection is remembered, so a button (or the link's question) does not lose it.
    var lastRange=null;
    document.addEventListener("selectionchange",function(){var s=getSelection();if(s.rangeCount&&ed.contains(s.anchorNode))lastRange=s.getRangeAt(0).cloneRange();});
    function backToText(range){ed.focus();if(range){var s=getSelection();s.removeAllRanges();s.addRange(range);}}
    document.querySelectorAll(".toolbar button").forEach(function(b){b.addEventListener("mousedown",function(e){e.preventDefault();});});
    document.querySelectorAll(".toolbar [data-cmd]").forEach(function(b){b.addEventListener("click",function(e){e.preventDefault();backToText(lastRange);
      document.execCommand(b.dataset.cmd,false,b.dataset.arg||null);changed();});});
    // The server keeps http, https and mailto links only (src/modules/notes/rich.ts); the rest is refused here, where it can be fixed.
    function linkTarget(raw){var v=raw.trim();if(!v)return null;
      if(!/^[a-z][a-z0-9+.-]*:/i.test(v))v=(/^[^\s@\/]+@[^\s@\/]+\.[^\s@\/]+$/.test(v)?"mailto:":"https://")+v;
      var u;try{u=new URL(v);}catch(e){return null;}
      if(u.protocol==="mailto:")return u.href.length>7?u.href:null;
      return (u.protocol==="http:"||u.protocol==="https:")&&u.hostname?u.href:null;}
    var linkBtn=document.querySelector(".toolbar [data-link]");
    if(linkBtn)linkBtn.addEventListener("click",function(e){e.preventDefault();var range=lastRange&&lastRange.cloneRange();
      var asked=prompt("Link to (an https://, http:// or mailto: address)","https://");
      if(asked===null){backToText(range);return;}
      var href=linkTarget(asked);
      backToText(range);
      if(!href){say("Not a link: use an https://, http:// or mailto: address.");return;}
      var s=getSelection();
      if(s.rangeCount&&!s.getRangeAt(0).collapsed)document.execCommand("createLink",false,href);
      else{var a=document.createElement("a");a.href=href;a.textContent=href.replace(/^mailto:/,"");document.execCommand("insertHTML",false,a.outerHTML);}
      changed();});
  })(noteEd);
`;
