// Counts cl100k_base tokens with js-tiktoken, whose ranks ship inside the package (nothing fetched).
// Reads a JSON array of strings on stdin; prints a JSON array of their token counts.
import { Tiktoken } from "js-tiktoken/lite";
import cl100k_base from "js-tiktoken/ranks/cl100k_base";

const encoding = new Tiktoken(cl100k_base);
let input = "";
for await (const chunk of process.stdin) input += chunk;
console.log(JSON.stringify(JSON.parse(input).map((text) => encoding.encode(text).length)));
