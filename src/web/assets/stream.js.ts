/**
 * A stream's page: new lines arrive as Server-Sent Events while the page is open, "last write"
 * follows them, an indicator says whether the follow is connected, and each line's time shows
 * on request ("Show times", remembered in this browser). Times are CSS-generated from data-t, so
 * copying the lines copies the log as it was written.
 */
export const STREAM_JS = String.raw`  // Live stream: new lines arrive as Server-Sent Events while the page is open (the API's follow).
  var tailPre=document.querySelector("[data-tail]");
  if(tailPre)(function(pre){
    var cursor=pre.dataset.cursor,size=document.getElementById("byte-size"),last=document.getElementById("last-write"),
      live=document.getElementById("live-state"),toggle=document.getElementById("show-times"),enc=new TextEncoder(),TIMES_KEY="notestream:show-times";
    pre.scrollTop=pre.scrollHeight;
    function pad(n){return n<10?"0"+n:""+n;}
    // In the browser's time zone, to the second; the date too unless it is today.
    function stamp(ln){if(ln.dataset.t)return;var d=new Date(ln.dataset.at);if(isNaN(d.getTime()))return;
      var day=d.toDateString()===new Date().toDateString()?"":d.getFullYear()+"-"+pad(d.getMonth()+1)+"-"+pad(d.getDate())+" ";
      ln.dataset.t=day+pad(d.getHours())+":"+pad(d.getMinutes())+":"+pad(d.getSeconds());ln.title="Appended "+d.toISOString().replace("T"," ").slice(0,19)+" UTC";}
    function lineTimes(on){pre.classList.toggle("times",on);if(on)pre.querySelectorAll(".ln").forEach(stamp);}
    if(toggle){var on=false;try{on=localStorage.getItem(TIMES_KEY)==="1";}catch(e){}
      document.getElementById("times-toggle").hidden=false;toggle.checked=on;lineTimes(on);
      toggle.addEventListener("change",function(){try{localStorage.setItem(TIMES_KEY,toggle.checked?"1":"0");}catch(e){}lineTimes(toggle.checked);});}
    function state(kind,text){if(!live)return;live.hidden=false;live.className="live "+kind;live.textContent=text;}
    // "last write" as the layout renders it (a <time>), re-rendered by the times piece when it is there.
    function wrote(at){if(!last)return;var t=last.querySelector("time");if(!t){t=document.createElement("time");last.textContent="";last.appendChild(t);}
      t.setAttribute("datetime",at);t.textContent=at.replace("T"," ").slice(0,16)+" UTC";t.title=at;if(typeof showTimes==="function")showTimes();}
    if(!window.EventSource){state("off","Not live: this browser cannot follow the stream");return;}
    function follow(){state("wait","Connecting…");var es=new EventSource(pre.dataset.tail+"?cursor="+encodeURIComponent(cursor));
      es.onopen=function(){state("on","Live");};
      es.onmessage=function(e){var l=JSON.parse(e.data),t=l.text+"\n",stick=pre.scrollTop+pre.clientHeight>=pre.scrollHeight-8;cursor=e.lastEventId||cursor;
        var ln=document.createElement("span");ln.className="ln";ln.dataset.at=l.at;ln.textContent=t;if(pre.classList.contains("times"))stamp(ln);pre.appendChild(ln);
        if(size)size.textContent=Number(size.textContent)+enc.encode(t).length;wrote(l.at);if(stick)pre.scrollTop=pre.scrollHeight;};
      // The browser reconnects by itself after a dropped connection; a refusal (signed out, too many open) it does not retry: try again later.
      es.onerror=function(){if(es.readyState===2){state("off","Disconnected: trying again in 30 s");setTimeout(follow,30000);}else state("off","Disconnected: reconnecting…");};}
    follow();
  })(tailPre);
`;
