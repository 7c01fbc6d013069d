"""A dashboard on the cloud's app-side subscription written with paho-mqtt, the library of the
vendor's Python sample, as the cloud documents the protocol: MQTT 3.1.1 over WebSocket with TLS
at a path, username ProjectViewKey, password ProjectViewSecret, one filter at QoS 0.

usage: paho_app_subscriber.py HOST PORT PATH CA_FILE KEY SECRET FILTER COUNT TIMEOUT_S
Prints one JSON object a line: {"connack": rc}, {"granted": [...]}, then {"topic", "payload"}
per message; exits 0 after COUNT messages, 2 on a refused login, 3 on timeout.
"""
import json
import ssl
import sys
import threading

import paho.mqtt.client as mqtt

host, port, path, ca_file, key, secret, topic_filter = sys.argv[1:8]
count, timeout_s = int(sys.argv[8]), float(sys.argv[9])
received = 0
done = threading.Event()
exit_code = [3]


def emit(obj):
    print(json.dumps(obj), flush=True)


def on_connect(client, userdata, flags, rc):
    emit({"connack": rc})
    if rc != 0:
        exit_code[0] = 2
        done.set()
        return
    client.subscribe(topic_filter, qos=0)


def on_subscribe(client, userdata, mid, granted_qos):
    emit({"granted": list(granted_qos)})


def on_message(client, userdata, msg):
    global received
    emit({"topic": msg.topic, "payload": json.loads(msg.payload.decode("utf-8"))})
    received += 1
    if received >= count:
        exit_code[0] = 0
        done.set()


client = mqtt.Client(client_id="paho-app-test", transport="websockets", protocol=mqtt.MQTTv311)
client.ws_set_options(path=path)
client.tls_set(ca_certs=ca_file, cert_reqs=ssl.CERT_REQUIRED, tls_version=ssl.PROTOCOL_TLS_CLIENT)
client.username_pw_set(key, secret)
client.on_connect = on_connect
client.on_subscribe = on_subscribe
client.on_message = on_message
client.connect(host, int(port), 60)
client.loop_start()
done.wait(timeout_s)
client.loop_stop()
client.disconnect()
sys.exit(exit_code[0])
