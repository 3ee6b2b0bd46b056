# docs/clients/openai-python.py: the official `openai` package for Python.
# Documentation only: the test suite checks that this text is on the page, but
# does not run it (the tests run on Node alone).
import json
import os

from openai import OpenAI, APIStatusError

client = OpenAI(
    base_url="http://127.0.0.1:8080/v1",
    api_key=os.environ["PORTCULLIS_KEY"],
    max_retries=0,
    timeout=60.0,
)

completion = client.chat.completions.create(
    model="service-auto",
    messages=[{"role": "user", "content": "Hello!"}],
)
print(completion.model, completion.choices[0].message.content)

stream = client.chat.completions.create(
    model="service-chat",
    messages=[{"role": "user", "content": "Stream this"}],
    stream=True,
    stream_options={"include_usage": True},
)
for chunk in stream:
    if chunk.choices:
        print(chunk.choices[0].delta.content or "", end="")
    if chunk.usage:
        print("\nusage:", chunk.usage.prompt_tokens, chunk.usage.completion_tokens)

tools = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}]
messages = [{"role": "user", "content": "What is the weather in Oslo? Use get_weather."}]
first = client.chat.completions.create(model="service-chat", messages=messages, tools=tools)
call = first.choices[0].message.tool_calls[0]
city = json.loads(call.function.arguments)["city"]
messages.append(first.choices[0].message.model_dump(exclude_none=True))
messages.append({"role": "tool", "tool_call_id": call.id, "content": f"Sunny in {city}"})
second = client.chat.completions.create(model="service-chat", messages=messages, tools=tools)
print(second.choices[0].message.content)

try:
    client.chat.completions.create(model="service-chat", messages=[{"role": "user", "content": "Hi"}], n=2)
except APIStatusError as err:
    # err.body is the inside of the envelope: {"message", "type", "param", "code"}
    print(err.status_code, err.code, err.param, err.request_id)
