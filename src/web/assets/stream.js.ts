/** A stream's page: new lines arrive as Server-Sent Events while the page is open. */
export const STREAM_JS = `  // Live stream: new lines arrive as Server-Sent Events while the page is open (the API's follow).
  var pre=document.querySelector("[data-tail]");
  if(pre&&window.EventSource){var box=pre,cursor=pre.dataset.cursor,size=document.getElementById("byte-size"),enc=new TextEncoder();box.scrollTop=box.scrollHeight;
    function follow(){var es=new EventSource(pre.dataset.tail+"?cursor="+encodeURIComponent(cursor));
      es.onmessage=function(e){var l=JSON.parse(e.data),t=l.text+"\\n",stick=box.scrollTop+box.clientHeight>=box.scrollHeight-8;cursor=e.lastEventId||cursor;
        pre.appendChild(document.createTextNode(t));if(size)size.textContent=Number(size.textContent)+enc.encode(t).length;if(stick)box.scrollTop=box.scrollHeight;};
      // The browser reconnects by itself after a dropped connection; a refusal (signed out, too many open) it does not retry: try again later.
      es.onerror=function(){if(es.readyState===2)setTimeout(follow,30000);};}
    follow();}
`;
