// The ceiling: a bare Bun.serve endpoint that parses the same JSON body and answers.
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = (await req.json()) as { text: string };
    return Response.json({ ok: true, length: body.text.length }, { status: 200 });
  },
});
console.log(JSON.stringify({ msg: "listening", port: server.port }));
